/** Dashboard sessions (contract §13). */

import type { DashboardSession } from '../model.ts';

export interface SessionStore {
  createSession(session: DashboardSession): Promise<void>;
  /** The session with this token hash, unexpired at `now` and with its key unrevoked. */
  findSession(tokenHash: string, now: Date): Promise<DashboardSession | null>;
  deleteSession(tokenHash: string): Promise<void>;
}
