import { spawn } from 'node:child_process';

export interface ToolResult {
  /** Exit code; null when it was ended by the time limit or a signal. */
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** The program could not be started (ENOENT: it does not exist). */
  startError?: NodeJS.ErrnoException;
}

/** Output kept per stream: git's and gh's answers are short; a flood is cut. */
const OUTPUT_KEPT = 64 * 1024;

/**
 * Runs git or gh with its arguments as given (never a shell, so no value is ever parsed by
 * one), no input, and a time limit after which it is ended.
 */
export function runTool(
  program: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<ToolResult> {
  return new Promise((resolve) => {
    const child = spawn(program, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d: Buffer) => {
      if (stdout.length < OUTPUT_KEPT) stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      if (stderr.length < OUTPUT_KEPT) stderr += d.toString();
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 2000).unref();
    }, options.timeoutMs);
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ code: null, stdout, stderr, timedOut, startError: error });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: timedOut ? null : code, stdout, stderr, timedOut });
    });
  });
}

/** The last lines of a tool's complaint, for an error message. */
export function lastLines(text: string, n = 6): string {
  return text.trim().split('\n').slice(-n).join('\n');
}
