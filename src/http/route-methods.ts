/**
 * Which methods each path answers to, so a known path asked with the wrong method is a 405 with
 * an `Allow` header (RFC 9110 §15.5.6) instead of a 404 that reads as "no such route" (issue 30).
 *
 * Fastify's router answers only "this method on this path", so every route is also registered
 * here, in a second find-my-way router built with the app's own router options: a path matches
 * here exactly when it would match there. It is consulted only on the not-found path.
 */
import Router from 'find-my-way';

type HTTPMethod = Router.HTTPMethod;

export class RouteMethods {
  readonly #router: Router.Instance<Router.HTTPVersion.V1>;
  readonly #methods = new Set<HTTPMethod>();

  constructor(options: { ignoreTrailingSlash: boolean; maxParamLength: number }) {
    this.#router = Router(options);
  }

  add(method: string | string[], url: string): void {
    for (const one of ([] as string[]).concat(method) as HTTPMethod[]) {
      // Fastify registers a route's HEAD twin itself; a second registration would throw.
      if (this.#router.hasRoute(one, url)) continue;
      this.#router.on(one, url, () => {});
      this.#methods.add(one);
    }
  }

  /** The methods `url` (a request URL, query included or not) answers to, sorted; empty when none. */
  allowed(url: string): string[] {
    const allowed: string[] = [];
    for (const method of this.#methods) {
      if (this.#router.find(method, url) !== null) allowed.push(method);
    }
    return allowed.sort();
  }
}
