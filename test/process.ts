/** Helpers for suites that run the real `trackway` binary and talk HTTP to it. */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { captureOutput, serverLogLevel } from './log-capture.ts';

export const BIN = fileURLToPath(new URL('../bin/trackway.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export async function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** Everything the process printed to stdout so far. */
  output(): string;
  /** Everything it printed to stderr so far. */
  errors(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Waits until the process has printed a line matching `pattern` (its logs are written
 * asynchronously, so a line about something that already happened may still be on its way).
 */
export async function waitForOutput(
  server: Pick<ServerProcess, 'output'>,
  pattern: RegExp,
  timeoutMs = 10_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!pattern.test(server.output())) {
    if (Date.now() > until) {
      throw new Error(`no output matching ${pattern} within ${timeoutMs} ms:\n${server.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Starts `trackway serve` on a free port (PORT=0) and resolves once it is listening: one
 * process unless `env` asks for more (TRACKWAY_PROCESSES), so a suite's pid is the server's.
 */
export async function startServerProcess(
  env: Record<string, string>,
  /** Long for suites that start servers while the machine is busy (e.g. the full suite). */
  startTimeoutMs = 20_000,
): Promise<ServerProcess> {
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: serverLogLevel,
      TRACKWAY_PROCESSES: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  captureOutput(child);
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Not left running behind the failed test (nobody holds it to stop it).
      child.kill('SIGKILL');
      reject(new Error(`server did not start:\n${stdout}\n${stderr}`));
    }, startTimeoutMs);
    child.stdout!.on('data', (d) => {
      stdout += d;
      const match = /Trackway is listening on (http:\/\/\S+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${stdout}\n${stderr}`));
    });
  });
  return {
    child,
    url,
    output: () => stdout,
    errors: () => stderr,
    async stop(signal = 'SIGTERM') {
      // Exited already (killed by a signal, exitCode stays null): 'exit' will not fire again.
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      const exited = once(child, 'exit') as Promise<[number | null]>;
      child.kill(signal);
      const [code] = await exited;
      return code;
    },
  };
}
