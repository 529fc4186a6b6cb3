/** Where uploads go, and how hard the client tries. */
export const config = {
  endpoint: 'https://uploads.example.com',
  retries: 0,
  timeoutMs: 5000,
};
