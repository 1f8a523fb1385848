/**
 * Names for the shapes in the generated OpenAPI types (src/generated/openapi.ts, made by
 * `npm run openapi` from the server's own document). Nothing here is written by hand but
 * the aliases, so a schema change on the server reaches these types on regeneration.
 */
import type { components, operations } from './generated/openapi.ts';

export type { components, operations, paths, webhooks } from './generated/openapi.ts';

type Schemas = components['schemas'];

export type TrackEvent = Schemas['TrackEvent'];
export type UserData = Schemas['UserData'];
export type TrackEventResponse = Schemas['TrackEventResponse'];
export type TrackBatchResponse = Schemas['TrackBatchResponse'];
export type TrackBatchResult = Schemas['TrackBatchResult'];
export type EventRecord = Schemas['EventRecord'];
export type EventList = Schemas['EventList'];
export type Pixel = Schemas['Pixel'];
export type PixelList = Schemas['PixelList'];
export type Webhook = Schemas['Webhook'];
export type WebhookWithSecret = Schemas['WebhookWithSecret'];
export type Delivery = Schemas['Delivery'];
export type DeliveryList = Schemas['DeliveryList'];
export type ApiErrorBody = Schemas['Error'];

/** Every body Trackway POSTs to a webhook endpoint, told apart by `event`. */
export type WebhookPayload =
  | Schemas['EventTrackedWebhook']
  | Schemas['EventForwardedWebhook']
  | Schemas['PixelCreatedWebhook']
  | Schemas['PixelUpdatedWebhook']
  | Schemas['SubscriptionUpdatedWebhook'];
export type WebhookEventType = WebhookPayload['event'];

/** The API's operations (the `receive…` ones describe webhook deliveries, sent to you). */
export type OperationId = Exclude<keyof operations, `receive${string}`>;

type JsonContent<T> = T extends { content: { 'application/json': infer B } } ? B : never;

/** The JSON body an operation takes (`never` when it takes none). */
export type RequestBody<O extends OperationId> = operations[O] extends {
  requestBody?: infer R;
}
  ? JsonContent<NonNullable<R>>
  : never;

/** The JSON body of an operation's 2xx answer. */
export type ResponseBody<O extends OperationId> = {
  [S in keyof operations[O]['responses']]: S extends 200 | 201 | 202
    ? JsonContent<operations[O]['responses'][S]>
    : never;
}[keyof operations[O]['responses']];

export type QueryOf<O extends OperationId> = NonNullable<operations[O]['parameters']['query']>;
