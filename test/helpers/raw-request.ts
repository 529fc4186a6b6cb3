/**
 * One HTTP or HTTPS request as a test needs to shape it, where fetch cannot: any Host header, a
 * chosen source address of this machine (`from`, to stand for another client), a certificate
 * authority of the test's own (`ca`), no connection kept. Plain Node: no test runner.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface RawInit {
  method?: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** A source address of this machine to send from (127.0.0.3, say). */
  from?: string;
  /** The only certificate authority an HTTPS request trusts. */
  ca?: string;
}

export function rawRequest(url: string, init: RawInit = {}): Promise<RawAnswer> {
  const body = init.body === undefined ? undefined : JSON.stringify(init.body);
  const request = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: init.method ?? 'GET',
        agent: false,
        ...(init.ca ? { ca: init.ca } : {}),
        ...(init.from ? { localAddress: init.from } : {}),
        headers: {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...init.headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
