/**
 * Searches captured logs for what must never be in them: API keys, webhook secrets (also inside
 * a logged URL: `?api_key=tw_live_…`), credentials in URLs, and raw personal data (email
 * addresses, phone numbers). Only log records (JSON lines) are searched:
 * the first-run banner prints an API key on stdout on purpose, once, and is not a log line.
 *
 *   node --import tsx test/log-scan.ts <dir>    exits 1 and lists the findings if any
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const PATTERNS: Record<string, RegExp> = {
  'API key': /tw_live_[0-9A-Za-z]{16,}/,
  'webhook secret': /whsec_[0-9A-Za-z+/]{16,}/,
  'email address': /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/,
  // E.164 or a written form of it (`+1 (650) 555-0123`); `+01:00` offsets do not match.
  'phone number': /\+[1-9](?:[\s().-]*\d){7,14}/,
  // `postgres://user:password@host`, `redis://password@host`: a masked `***` is fine.
  'URL credentials': /:\/\/(?:[^\s/:@"]*:)?(?!\*\*\*@)[^\s/:@"]+@/,
};

export interface LogFinding {
  kind: string;
  file: string;
  line: string;
}

export function scanLogText(text: string, file = '-'): LogFinding[] {
  const findings: LogFinding[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    for (const [kind, pattern] of Object.entries(PATTERNS)) {
      if (pattern.test(line)) findings.push({ kind, file, line: line.slice(0, 300) });
    }
  }
  return findings;
}

export function scanLogDir(dir: string): { files: number; lines: number; findings: LogFinding[] } {
  let lines = 0;
  const findings: LogFinding[] = [];
  const files = readdirSync(dir);
  for (const name of files) {
    const text = readFileSync(join(dir, name), 'utf8');
    lines += text.split('\n').filter((l) => l.startsWith('{')).length;
    findings.push(...scanLogText(text, name));
  }
  return { files: files.length, lines, findings };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: log-scan.ts <dir>');
  const { files, lines, findings } = scanLogDir(dir);
  const count = (kind: string) => findings.filter((f) => f.kind === kind).length;
  console.log(
    `\nlog scan: ${lines} log records from ${files} captured logs (every in-process app at trace level, every server process): ` +
      Object.keys(PATTERNS)
        .map((kind) => `${count(kind)} × ${kind}`)
        .join(', '),
  );
  for (const f of findings.slice(0, 20)) console.error(`  ${f.kind} in ${f.file}: ${f.line}`);
  if (findings.length > 0) process.exitCode = 1;
}
