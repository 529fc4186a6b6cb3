import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';

const PLACEHOLDER = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Session Desk</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><main><h1>Session Desk</h1>
<p>The API is running. The dashboard has not been built: run <code>npm run build</code>.</p>
<p>API document: <a href="/api/openapi.json">/api/openapi.json</a></p></main></body></html>`;

/**
 * Serves the built dashboard at `/` (any non-API path falls back to index.html, for the
 * dashboard's own routing), or a placeholder page when it has not been built.
 * Returns the fallback for the app's not-found handler.
 */
export async function rendererRoutes(
  app: FastifyInstance,
  rendererDir: string | undefined,
): Promise<(reply: FastifyReply) => FastifyReply> {
  const indexPath = rendererDir === undefined ? undefined : join(rendererDir, 'index.html');
  if (rendererDir === undefined || indexPath === undefined || !existsSync(indexPath)) {
    const page = (reply: FastifyReply) => reply.type('text/html; charset=utf-8').send(PLACEHOLDER);
    app.get('/', { schema: { hide: true } }, (_request, reply) => page(reply));
    return page;
  }
  const index = readFileSync(indexPath, 'utf8');
  await app.register(fastifyStatic, { root: rendererDir, prefix: '/', index: false, wildcard: true });
  const page = (reply: FastifyReply) => reply.type('text/html; charset=utf-8').send(index);
  app.get('/', { schema: { hide: true } }, (_request, reply) => page(reply));
  return page;
}
