/**
 * Before SQLite opens its file: the file, its `-wal` and `-shm` and its directory must be
 * writable by this process, or the service would start "ready" and answer 500 to every write
 * (issue 30). Each is tried the way SQLite will use it (opened for writing; a file created in
 * the directory), so the answer holds for root too, whom permission bits do not stop but a
 * read-only mount or an immutable file does. A failure is one line naming the path and the user.
 *
 * The directory is made one level at a time instead of with `mkdirSync(…, {recursive: true})`,
 * which loops forever in Node 20 on a path no directory can be made in (`/proc/nope/t.db`),
 * synchronously, so the process could not even be stopped with SIGTERM.
 */
import { closeSync, mkdirSync, openSync, statSync, unlinkSync } from 'node:fs';
import { userInfo } from 'node:os';
import { basename, dirname, resolve } from 'node:path';
import { ConfigError } from '../../config.ts';

/** `root (uid 0)`; only the uid when the user has no name (a container's arbitrary uid). */
function currentUser(): string {
  try {
    const { username, uid } = userInfo();
    return uid === -1 ? username : `${username} (uid ${uid})`;
  } catch {
    return `uid ${process.getuid?.() ?? 'unknown'}`;
  }
}

function reason(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException;
  // Node's message repeats the syscall and the path, which the sentence names already.
  return code ? `${code}: ${message.replace(/^\w+: /, '').replace(/, \w+ '.*'$/, '')}` : message;
}

function refuse(database: string, what: string, error: unknown): never {
  throw new ConfigError(
    `SQLite database ${database}: ${what} (${reason(error)}), running as user ${currentUser()}; give that user write access there or set DATABASE_URL to another path`,
    { cause: error },
  );
}

/** Makes `dir` and any missing parents, one level at a time. */
function makeDirectory(database: string, dir: string): void {
  const missing: string[] = [];
  for (let at = dir; ; at = dirname(at)) {
    try {
      // Found. Not a directory (a file in the way) is left to the step that needs one to say.
      statSync(at);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        refuse(database, `cannot reach ${at}`, error);
      }
      missing.unshift(at);
      // The root itself is missing: nothing further up to make it in.
      if (dirname(at) === at) refuse(database, `cannot create ${dir}`, error);
    }
  }
  for (const at of missing) {
    try {
      mkdirSync(at);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        refuse(database, `cannot create the directory ${at}`, error);
      }
    }
  }
}

/** Opens `file` for writing without changing it, when it exists. */
function checkFile(database: string, file: string): void {
  let fd: number;
  try {
    fd = openSync(file, 'r+');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    refuse(database, `${file} is not writable`, error);
  }
  closeSync(fd);
}

/** Makes the directory of a SQLite file if needed and checks everything SQLite will write. */
export function prepareSqlitePath(path: string): void {
  const database = resolve(path);
  const dir = dirname(database);
  makeDirectory(database, dir);
  // SQLite creates the database, `-wal` and `-shm` (and removes them) in the directory.
  const probe = resolve(dir, `.${basename(database)}.write-check-${process.pid}`);
  try {
    closeSync(openSync(probe, 'w'));
  } catch (error) {
    refuse(database, `cannot create files in its directory ${dir}`, error);
  }
  unlinkSync(probe);
  for (const file of [database, `${database}-wal`, `${database}-shm`]) checkFile(database, file);
}
