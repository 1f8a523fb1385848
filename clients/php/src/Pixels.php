<?php

declare(strict_types=1);

namespace Trackway;

use Trackway\Internal\Requester;

/** `$client->pixels`: the account's pixels. Answers are the API's JSON as arrays. */
final class Pixels
{
    /** @internal */
    public function __construct(private readonly Requester $client)
    {
    }

    /**
     * `['pixels' => [...], 'total' => n, 'limit' => n, 'offset' => n]`.
     *
     * @param array{limit?: int, offset?: int} $query
     * @return array<string, mixed>
     */
    public function list(array $query = []): array
    {
        return $this->client->request('GET', '/v1/pixels', null, $query);
    }

    /**
     * Creates a pixel: `['name' => 'Shop', 'domain' => 'shop.example.com']`. Retried only on 429
     * (a create resent after a lost answer could create twice).
     *
     * @param array<string, mixed> $params
     * @return array<string, mixed>
     */
    public function create(array $params): array
    {
        return $this->client->request('POST', '/v1/pixels', $params, [], false);
    }

    /** @return array<string, mixed> */
    public function get(string $pixelId): array
    {
        return $this->client->request('GET', '/v1/pixels/' . rawurlencode($pixelId));
    }

    /**
     * Changes `name`, `domain`, `tracking_domain` or `status` (`active` | `paused`).
     *
     * @param array<string, mixed> $params
     * @return array<string, mixed>
     */
    public function update(string $pixelId, array $params): array
    {
        return $this->client->request('PATCH', '/v1/pixels/' . rawurlencode($pixelId), $params);
    }
}
