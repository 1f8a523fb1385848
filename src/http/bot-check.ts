/**
 * `isbot` remembered per user agent. Its pattern costs ~2.7 µs a call, paid on every browser
 * event, yet a site's visitors send a few hundred distinct user agents between them, each many
 * times: a hit costs ~0.01 µs (issue 35). Bounded: at most `MAX_ENTRIES` agents of at most
 * `MAX_AGENT_CHARS` each are kept (the table is emptied when full, so a flood of made-up agents
 * costs memory no more than that, and only the pattern's time); longer agents are checked
 * every time.
 */
import { isbot } from 'isbot';

const MAX_ENTRIES = 2_000;
const MAX_AGENT_CHARS = 512;

export class BotCheck {
  readonly #known = new Map<string, boolean>();

  isBot(userAgent: string): boolean {
    if (userAgent.length > MAX_AGENT_CHARS) return isbot(userAgent);
    let bot = this.#known.get(userAgent);
    if (bot === undefined) {
      bot = isbot(userAgent);
      if (this.#known.size >= MAX_ENTRIES) this.#known.clear();
      this.#known.set(userAgent, bot);
    }
    return bot;
  }

  /** Agents held (for the bound's test). */
  get size(): number {
    return this.#known.size;
  }
}
