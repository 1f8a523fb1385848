<?php

declare(strict_types=1);

namespace Trackway\Internal;

/** @internal One HTTP answer: status, lower-cased headers, the JSON body parsed (null when not JSON). */
final class Response
{
    /** @param array<string, string> $headers */
    public function __construct(
        public readonly int $status,
        public readonly array $headers,
        public readonly mixed $body,
    ) {
    }
}
