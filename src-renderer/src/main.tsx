import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { ApiError } from './api/client';
import { App } from './app';
import { presentLaunchToken } from './api/launch-token';
import { takeSignInError } from './api/sign-in-error';
import './styles.css';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A 4xx will not change by asking again; a dropped connection might.
      retry: (failures, error) =>
        !(error instanceof ApiError && error.status >= 400 && error.status < 500) && failures < 2,
      refetchOnWindowFocus: true,
    },
  },
});

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element');
const signInError = takeSignInError();
// Before the first request: whether this browser may set up depends on the token.
void presentLaunchToken().then(({ refused }) =>
  createRoot(root).render(
    <StrictMode>
      <QueryClientProvider client={queryClient}>
        <BrowserRouter>
          <App launchTokenRefused={refused} signInError={signInError} />
        </BrowserRouter>
      </QueryClientProvider>
    </StrictMode>,
  ),
);
