import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, LogFn } from 'pino';

/**
 * Fastify gives every request a child logger bound to its request id. Made eagerly, that child
 * costs a few µs per request: our logger redacts (see ../logger.ts), and pino runs the
 * redaction over the bindings of every child it makes. On the hot path nothing is logged, so
 * this one makes the real child only when something is: same output, no cost otherwise.
 */
export class LazyChildLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  /** Whether the real child exists yet (for tests). */
  get materialised(): boolean {
    return this.made !== undefined;
  }

  /** The real child logger, made on first use. */
  get real(): FastifyBaseLogger {
    this.made ??= this.parent.child(this.bindings, this.options);
    return this.made;
  }

  get level(): string {
    return this.made?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.real.level = level;
  }

  // One shared method per level on the prototype (below), not a closure per request.
  declare fatal: LogFn;
  declare error: LogFn;
  declare warn: LogFn;
  declare info: LogFn;
  declare debug: LogFn;
  declare trace: LogFn;
  declare silent: LogFn;

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real.child(bindings, options);
  }
}

/** pino's level values: a call below the logger's level writes nothing. */
const LEVEL_VALUES: Record<string, number> = {
  fatal: 60,
  error: 50,
  warn: 40,
  info: 30,
  debug: 20,
  trace: 10,
  silent: Number.POSITIVE_INFINITY,
};

for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const) {
  LazyChildLogger.prototype[level] = function (this: LazyChildLogger, ...args: unknown[]) {
    // Below the level, pino would write nothing: no reason to make the child for it.
    if (!this.materialised && LEVEL_VALUES[level]! < (LEVEL_VALUES[this.level] ?? 0)) return;
    (this.real[level] as (...a: unknown[]) => void)(...args);
  } as LogFn;
}
