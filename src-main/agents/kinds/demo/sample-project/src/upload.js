import { config } from './config.js';

/** Sends `body` to the upload server, trying again after a failure up to `config.retries` times. */
export async function upload(body, send = fetch) {
  let lastError;
  for (let attempt = 0; attempt <= config.retries; attempt += 1) {
    try {
      const response = await send(`${config.endpoint}/files`, {
        method: 'POST',
        body,
        signal: AbortSignal.timeout(config.timeoutMs),
      });
      if (response.ok) return response;
      lastError = new Error(`The upload failed with status ${response.status}`);
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError;
}
