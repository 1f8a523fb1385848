/**
 * Where webhooks may be sent (the SSRF rule, contract §6). Checking resolves DNS, so it is a
 * port: the domain asks, the adapter (delivery/ssrf.ts) looks up.
 */
export interface DestinationCheck {
  /** The normalised URL, or a TrackwayError naming the `url` field. */
  check(url: string): Promise<URL>;
}
