import { createPlatformGateway } from '../../delivery/platform-sender.ts';
import {
  DestinationIdParams,
  TestDestinationSchema,
  TestResultSchema,
} from '../../domain/forwarding/destination-schemas.ts';
import { testDestination } from '../../domain/forwarding/event-forwarding.ts';
import {
  PLATFORM_MODULES,
  PLATFORMS,
  type Platform,
} from '../../domain/forwarding/platforms/registry.ts';
import type { PlatformGateway } from '../../domain/ports/platform-gateway.ts';
import type { App, AppDeps } from '../deps.ts';
import { contextOf, errorResponses } from '../route-kit.ts';

/** The platforms' own URLs, for an app built without a gateway (made on first use). */
let fallback: PlatformGateway | undefined;
const defaultGateway = () =>
  (fallback ??= createPlatformGateway(
    Object.fromEntries(
      PLATFORMS.map((type) => [type, PLATFORM_MODULES[type].baseUrl.default]),
    ) as Record<Platform, string>,
  ));

/** The gateway a test send uses: the app's own, else the platforms' URLs (the dashboard too). */
export const platformGatewayOf = (deps: AppDeps): PlatformGateway =>
  deps.platforms ?? defaultGateway();

export function registerTestDestination(app: App, deps: AppDeps): void {
  app.post(
    '/v1/pixels/:pixel_id/destinations/:destination_id/test',
    {
      schema: {
        operationId: 'testDestination',
        summary: 'Send one event to a destination in test mode',
        description:
          "Sends the given stored event (or a sample) in the platform's test mode (the destination's `test_event_code`, `TEST_TRACKWAY` when it has none; Pinterest `?test=true`, Snapchat `/events/validate`, Reddit `test_id`, GA4 `/debug/mp/collect`) and answers with what the platform said. A platform without a test mode (Microsoft) is sent nothing: the request is built and checked, and the answer is `{ok, status_code: null, platform_response: null, payload}`. Nothing is recorded.",
        tags: ['Destinations'],
        params: DestinationIdParams,
        body: TestDestinationSchema,
        response: { 200: TestResultSchema, ...errorResponses },
      },
    },
    async (request) =>
      testDestination({
        ctx: contextOf(deps, request),
        platforms: platformGatewayOf(deps),
        pixelId: request.params.pixel_id,
        id: request.params.destination_id,
        input: request.body,
      }),
  );
}
