/**
 * The official clients in clients/ (Python, Go, PHP, Ruby) as the suites and the benchmark run
 * them: where each lives, which toolchain it needs, how its scenario driver, its own unit tests
 * and its README example are started. A client whose directory is absent is skipped with a
 * message; one whose toolchain is absent is skipped too, except under CI, where that fails.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export type ClientName = 'python' | 'go' | 'php' | 'ruby';

export interface Command {
  cmd: string;
  args: string[];
  cwd: string;
  env?: Record<string, string>;
}

export interface ClientDriver {
  name: ClientName;
  dir: string;
  /** The executable the client needs (looked up on PATH). */
  tool: string;
  /** The client counts as present once its scenario driver exists. */
  marker: string;
  /** The client's own unit tests, in its language's standard runner. */
  unitTests: Command;
  /** The info string of the README's fenced code blocks, e.g. ```python. */
  fence: string;
  /** Writes a README example where it can run and says how to run it. */
  example(code: string): { command: Command; cleanup(): void };
  /** Builds what the scenario driver needs (once per run) and returns how to start it. */
  scenario(): Promise<Command>;
}

function which(tool: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status === 0;
}

const dir = (name: ClientName) => join(ROOT, 'clients', name);

/** The client is pure Go: no C compiler needed wherever the toolchain is. */
const GO_ENV = { CGO_ENABLED: '0' };

/** Go builds into a temporary directory once per process; removed at exit. */
let goBuild: Promise<string> | undefined;
function buildGo(main: string): Promise<string> {
  goBuild ??= (async () => {
    const out = mkdtempSync(join(tmpdir(), 'trackway-go-'));
    process.once('exit', () => rmSync(out, { recursive: true, force: true }));
    const binary = join(out, 'scenario');
    const result = await run({
      cmd: 'go',
      args: ['build', '-o', binary, main],
      cwd: dir('go'),
      env: GO_ENV,
    });
    if (result.code !== 0) throw new Error(`go build failed:\n${result.stderr}`);
    return binary;
  })();
  return goBuild;
}

function inTemp(
  name: string,
  code: string,
  command: (file: string) => Command,
): { command: Command; cleanup(): void } {
  const folder = mkdtempSync(join(tmpdir(), 'trackway-readme-'));
  const file = join(folder, name);
  writeFileSync(file, code);
  return {
    command: command(file),
    cleanup: () => rmSync(folder, { recursive: true, force: true }),
  };
}

export const DRIVERS: ClientDriver[] = [
  {
    name: 'python',
    dir: dir('python'),
    tool: 'python3',
    marker: join(dir('python'), 'scenario.py'),
    unitTests: {
      cmd: 'python3',
      args: ['-m', 'unittest', 'discover', '-s', 'tests', '-t', '.'],
      cwd: dir('python'),
    },
    fence: 'python',
    // As a user who installed the package runs a script: from elsewhere, the package on the path.
    example: (code) =>
      inTemp('example.py', code, (file) => ({
        cmd: 'python3',
        args: [file],
        cwd: tmpdir(),
        env: { PYTHONPATH: dir('python') },
      })),
    scenario: async () => ({
      cmd: 'python3',
      args: [join(dir('python'), 'scenario.py')],
      cwd: ROOT,
    }),
  },
  {
    name: 'go',
    dir: dir('go'),
    tool: 'go',
    marker: join(dir('go'), 'scenario'),
    unitTests: { cmd: 'go', args: ['test', './...'], cwd: dir('go'), env: GO_ENV },
    fence: 'go',
    // Inside the module (a `_` directory, which `./...` skips), so its import resolves.
    example: (code) => {
      const folder = mkdtempSync(join(dir('go'), '_readme-'));
      writeFileSync(join(folder, 'main.go'), code);
      return {
        command: { cmd: 'go', args: ['run', `./${basename(folder)}`], cwd: dir('go'), env: GO_ENV },
        cleanup: () => rmSync(folder, { recursive: true, force: true }),
      };
    },
    scenario: async () => ({ cmd: await buildGo('./scenario'), args: [], cwd: ROOT }),
  },
  {
    name: 'php',
    dir: dir('php'),
    tool: 'php',
    marker: join(dir('php'), 'scenario.php'),
    unitTests: { cmd: 'php', args: ['tests/run.php'], cwd: dir('php') },
    fence: 'php',
    example: (code) =>
      inTemp('example.php', code, (file) => ({
        cmd: 'php',
        args: ['-d', `include_path=.:${dir('php')}`, file],
        cwd: dir('php'),
      })),
    scenario: async () => ({ cmd: 'php', args: [join(dir('php'), 'scenario.php')], cwd: ROOT }),
  },
  {
    name: 'ruby',
    dir: dir('ruby'),
    tool: 'ruby',
    marker: join(dir('ruby'), 'scenario.rb'),
    unitTests: {
      cmd: 'ruby',
      args: [
        '-Ilib',
        '-Itest',
        '-e',
        'Dir["test/**/*_test.rb"].sort.each { |f| require File.expand_path(f) }',
      ],
      cwd: dir('ruby'),
    },
    fence: 'ruby',
    example: (code) =>
      inTemp('example.rb', code, (file) => ({
        cmd: 'ruby',
        args: [file],
        cwd: dir('ruby'),
        env: { RUBYLIB: join(dir('ruby'), 'lib') },
      })),
    scenario: async () => ({ cmd: 'ruby', args: [join(dir('ruby'), 'scenario.rb')], cwd: ROOT }),
  },
];

/**
 * Why `driver` cannot run here, or undefined when it can. A missing toolchain is a skip on a
 * developer's machine and an error under CI (where .ci/run installs it).
 */
export function unavailable(driver: ClientDriver): string | undefined {
  if (!existsSync(driver.marker)) return `clients/${driver.name} is not in the repository yet`;
  if (!which(driver.tool)) {
    const reason = `${driver.tool} is not installed (needed by clients/${driver.name})`;
    if (process.env['CI']) throw new Error(`${reason}; CI installs it in .ci/run`);
    return reason;
  }
  return undefined;
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** The scenario driver's command for one step (`track`, `iterate`, `verify`, `get`). */
export function step(scenario: Command, name: 'track' | 'iterate' | 'verify' | 'get'): Command {
  return { ...scenario, args: [...scenario.args, name] };
}

/** Runs a command to its end, feeding `input` on stdin; kills it after `timeoutMs`. */
export function run(
  command: Command,
  env: Record<string, string> = {},
  input = '',
  timeoutMs = 120_000,
): Promise<RunResult> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command.cmd, command.args, {
      cwd: command.cwd,
      env: { ...process.env, ...command.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: performance.now() - started });
    });
    child.stdin.end(input);
  });
}

/** The JSON object a scenario driver printed on its last line of stdout. */
export function lastJson<T>(result: RunResult): T {
  const lines = result.stdout.trim().split('\n');
  try {
    return JSON.parse(lines[lines.length - 1] ?? '') as T;
  } catch {
    throw new Error(
      `no JSON on the last line (exit ${result.code}):\n${result.stdout}\n${result.stderr}`,
    );
  }
}
