<?php

declare(strict_types=1);

namespace Trackway;

use Trackway\Internal\Requester;

/** `$client->webhooks`: the account's webhook endpoints (checking a delivery is Webhook::verify()). */
final class Webhooks
{
    /** @internal */
    public function __construct(private readonly Requester $client)
    {
    }

    /** @return array<string, mixed> `['webhooks' => [...]]` */
    public function list(): array
    {
        return $this->client->request('GET', '/v1/webhooks');
    }

    /**
     * `['url' => 'https://…', 'events' => ['event.tracked']]`; the answer's `secret` is shown this
     * once. Retried only on 429.
     *
     * @param array<string, mixed> $params
     * @return array<string, mixed>
     */
    public function create(array $params): array
    {
        return $this->client->request('POST', '/v1/webhooks', $params, [], false);
    }

    /** @return array<string, mixed> */
    public function get(string $webhookId): array
    {
        return $this->client->request('GET', '/v1/webhooks/' . rawurlencode($webhookId));
    }

    /**
     * @param array<string, mixed> $params `url`, `events`, `description`, `enabled`
     * @return array<string, mixed>
     */
    public function update(string $webhookId, array $params): array
    {
        return $this->client->request('PATCH', '/v1/webhooks/' . rawurlencode($webhookId), $params);
    }

    /** @return array<string, mixed> */
    public function delete(string $webhookId): array
    {
        return $this->client->request('DELETE', '/v1/webhooks/' . rawurlencode($webhookId));
    }

    /**
     * A new secret (shown this once); the old one keeps signing beside it for 24 hours.
     *
     * @return array<string, mixed>
     */
    public function rotateSecret(string $webhookId): array
    {
        return $this->client->request('POST', '/v1/webhooks/' . rawurlencode($webhookId) . '/rotate-secret', null, [], false);
    }
}
