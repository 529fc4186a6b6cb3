import assert from 'node:assert/strict';
import { test } from 'node:test';
import { upload } from '../src/upload.js';

test('an upload answers with what the server sent', async () => {
  const response = await upload('hello', async () => new Response('stored'));
  assert.equal(await response.text(), 'stored');
});

test('a failed upload says why', async () => {
  await assert.rejects(
    upload('hello', async () => new Response('', { status: 503 })),
    /status 503/u,
  );
});
