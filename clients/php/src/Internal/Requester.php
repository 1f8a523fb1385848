<?php

declare(strict_types=1);

namespace Trackway\Internal;

use Trackway\Client;

/**
 * @internal One JSON request with its query string and retry rule. Held by the client and its
 * resource objects alike (rather than them holding the client), so no reference cycle keeps a
 * client alive past its scope: its destructor sends what it queued.
 */
final class Requester
{
    public function __construct(private readonly Transport $transport)
    {
    }

    /**
     * @param array<string, mixed>|null $body
     * @param array<string, scalar|null> $query
     * @return array<string, mixed>
     */
    public function request(string $method, string $path, ?array $body = null, array $query = [], ?bool $retryServerErrors = null): array
    {
        $method = strtoupper($method);
        $query = array_map(
            static fn ($v) => is_bool($v) ? ($v ? 'true' : 'false') : $v,
            array_filter($query, static fn ($v) => $v !== null),
        );
        if ($query !== []) {
            $path .= (str_contains($path, '?') ? '&' : '?') . http_build_query($query, '', '&', PHP_QUERY_RFC3986);
        }
        $response = $this->transport->exchange(
            $method,
            $path,
            $body === null ? null : Client::encode($body),
            [],
            $retryServerErrors ?? in_array($method, ['GET', 'PATCH', 'DELETE'], true),
        );
        /** @var array<string, mixed> */
        return $response->body;
    }
}
