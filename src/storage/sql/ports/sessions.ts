import type { SessionStore } from '../../../domain/ports/session-store.ts';
import * as sessions from '../../queries/dashboard-sessions.ts';
import type { Runner } from '../query.ts';

export function sessionStore({ sql: db, read, transaction }: Runner): SessionStore {
  return {
    createSession: (session) => transaction(() => sessions.createSession(db, session)),
    findSession: (tokenHash, now) => read(() => sessions.findSession(db, tokenHash, now)),
    deleteSession: (tokenHash) => read(() => sessions.deleteSession(db, tokenHash)),
  };
}
