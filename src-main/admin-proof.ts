import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Before the CLI sends the admin token (or a new user's password) to the address in
 * server.json, the server there proves it holds the token: it answers a fresh random
 * challenge with an HMAC keyed by the token, over the challenge and the port it was asked
 * on. A process that took the port of a server that is gone (server.json left behind, its
 * pid reused) cannot answer, and receives nothing secret; a relay to the real server on
 * another port gets a proof for the wrong port.
 */
export const ADMIN_PROOF_PATH = '/api/admin/proof';
export const CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{22,128}$/u;

export function newChallenge(): string {
  return randomBytes(32).toString('base64url');
}

export function adminProof(adminToken: string, challenge: string, port: number): string {
  return createHmac('sha256', adminToken)
    .update(`sessiondesk-admin-proof\n${challenge}\n${port}`)
    .digest('hex');
}

export function isValidProof(adminToken: string, challenge: string, port: number, proof: unknown): boolean {
  if (typeof proof !== 'string' || !/^[0-9a-f]{64}$/u.test(proof)) return false;
  return timingSafeEqual(
    Buffer.from(adminProof(adminToken, challenge, port), 'hex'),
    Buffer.from(proof, 'hex'),
  );
}
