<?php

declare(strict_types=1);

namespace Trackway\Internal;

use Trackway\Exception\ApiException;
use Trackway\Exception\NetworkException;

/**
 * @internal One HTTP exchange with retries, on PHP's own stream wrapper (no curl needed).
 *
 * Which failures are retried is the caller's call (a resent POST that creates something could
 * create it twice); when is decided here: a 429 after the `retry_after` the server names, a 5xx
 * or network error after a jittered exponential backoff, another 4xx never.
 */
final class Transport
{
    private const VERSION = '0.1.0';

    public function __construct(
        private readonly string $baseUrl,
        private readonly string $apiKey,
        private readonly float $timeout,
        private readonly int $maxRetries,
        private readonly float $retryBaseDelay,
        private readonly float $retryMaxDelay,
        private readonly float $maxRetryWait,
    ) {
    }

    /**
     * Sends until an answer that is final for this request: 2xx, a 4xx other than 429, or a
     * retryable failure once retries are spent (then thrown). `$retryServerErrors = false`
     * retries only 429, which the server answers before doing anything.
     *
     * @param array<string, string> $headers Extra headers (e.g. Content-Encoding).
     * @throws ApiException|NetworkException
     */
    public function exchange(string $method, string $pathAndQuery, ?string $body, array $headers, bool $retryServerErrors): Response
    {
        for ($retry = 0; ; $retry++) {
            try {
                $response = $this->send($method, $pathAndQuery, $body, $headers);
            } catch (NetworkException $error) {
                if (!$retryServerErrors || $retry >= $this->maxRetries) {
                    throw $error;
                }
                $this->sleep($this->backoff($retry));
                continue;
            }
            $status = $response->status;
            if ($status < 400) {
                return $response;
            }
            if ($status === 429) {
                $wait = $this->retryAfter($response);
                // A wait longer than max_retry_wait (a spent daily limit) is reported, not slept on.
                if ($retry >= $this->maxRetries || $wait > $this->maxRetryWait) {
                    throw ApiException::fromResponse($status, $response->body);
                }
                $this->sleep($wait);
                continue;
            }
            if (!$retryServerErrors || $status < 500 || $retry >= $this->maxRetries) {
                throw ApiException::fromResponse($status, $response->body);
            }
            $this->sleep($this->backoff($retry));
        }
    }

    /**
     * "Equal jitter": half the exponential step for sure, the other half random, so the retries
     * of many clients spread out but none retries at once. Seconds.
     */
    public function backoff(int $retry): float
    {
        $step = min($this->retryMaxDelay, $this->retryBaseDelay * (2 ** $retry));
        return $step / 2 + (mt_rand() / mt_getrandmax()) * ($step / 2);
    }

    public function sleep(float $seconds): void
    {
        if ($seconds > 0) {
            usleep((int) round($seconds * 1_000_000));
        }
    }

    /** Seconds the server asked us to wait: the body's `retry_after`, else `Retry-After`, else 1. */
    private function retryAfter(Response $response): float
    {
        $seconds = is_array($response->body) && is_numeric($response->body['retry_after'] ?? null)
            ? (float) $response->body['retry_after']
            : (is_numeric($response->headers['retry-after'] ?? null) ? (float) $response->headers['retry-after'] : 1.0);
        return max(1.0, $seconds);
    }

    /**
     * One attempt. A 2xx whose body is not complete JSON counts as no answer: every Trackway
     * route answers JSON, so a cut-short body means the connection broke mid-answer.
     *
     * @param array<string, string> $headers
     * @throws NetworkException
     */
    public function send(string $method, string $pathAndQuery, ?string $body, array $headers = []): Response
    {
        $lines = [
            'Authorization: Bearer ' . $this->apiKey,
            'Accept: application/json',
            'User-Agent: trackway-php/' . self::VERSION . ' PHP/' . PHP_VERSION,
            // The stream wrapper cannot reuse a connection; saying so stops it waiting for one.
            'Connection: close',
        ];
        if ($body !== null) {
            $lines[] = 'Content-Type: application/json';
            $lines[] = 'Content-Length: ' . strlen($body);
        }
        foreach ($headers as $name => $value) {
            $lines[] = "$name: $value";
        }
        $options = [
            'method' => $method,
            'header' => implode("\r\n", $lines),
            'ignore_errors' => true,
            'follow_location' => 0,
            'protocol_version' => 1.1,
            'timeout' => $this->timeout,
        ];
        if ($body !== null) {
            $options['content'] = $body;
        }
        $context = stream_context_create(['http' => $options]);
        $url = $this->baseUrl . $pathAndQuery;

        $warning = null;
        set_error_handler(static function (int $no, string $text) use (&$warning): bool {
            $warning = $text;
            return true;
        });
        try {
            $stream = fopen($url, 'rb', false, $context);
            if ($stream === false) {
                throw new NetworkException('Request failed: ' . self::reason($warning));
            }
            try {
                $seconds = (int) $this->timeout;
                stream_set_timeout($stream, $seconds, (int) (($this->timeout - $seconds) * 1_000_000));
                $meta = stream_get_meta_data($stream);
                $raw = stream_get_contents($stream);
                $after = stream_get_meta_data($stream);
            } finally {
                fclose($stream);
            }
        } finally {
            restore_error_handler();
        }
        if ($raw === false || ($after['timed_out'] ?? false)) {
            throw new NetworkException('Request failed: timed out after ' . $this->timeout . ' s');
        }
        [$status, $responseHeaders] = self::parseHeaders($meta['wrapper_data'] ?? []);
        if ($status === 0) {
            throw new NetworkException('Request failed: no HTTP status line in the answer');
        }
        $length = $responseHeaders['content-length'] ?? null;
        if ($length !== null && preg_match('/^\d+$/', $length) === 1 && strlen($raw) < (int) $length) {
            throw new NetworkException('Request failed: the answer was cut short');
        }
        $decoded = null;
        if ($raw !== '') {
            try {
                $decoded = json_decode($raw, true, 512, JSON_THROW_ON_ERROR | JSON_BIGINT_AS_STRING);
            } catch (\JsonException) {
                $decoded = null;
            }
        }
        if ($status >= 200 && $status < 300 && !is_array($decoded)) {
            throw new NetworkException('Request failed: the answer was cut short or not JSON');
        }
        return new Response($status, $responseHeaders, $decoded);
    }

    /**
     * @param list<string> $lines
     * @return array{0: int, 1: array<string, string>}
     */
    private static function parseHeaders(array $lines): array
    {
        $status = 0;
        $headers = [];
        foreach ($lines as $line) {
            if (preg_match('#^HTTP/\S+\s+(\d{3})#', $line, $match) === 1) {
                // A new status line (after a 100 Continue) starts a new header block.
                $status = (int) $match[1];
                $headers = [];
                continue;
            }
            $colon = strpos($line, ':');
            if ($colon !== false) {
                $headers[strtolower(trim(substr($line, 0, $colon)))] = trim(substr($line, $colon + 1));
            }
        }
        return [$status, $headers];
    }

    /** The useful part of a stream warning: `fopen(http://…): Failed to open stream: Connection refused`. */
    private static function reason(?string $warning): string
    {
        if ($warning === null) {
            return 'no answer';
        }
        $at = strpos($warning, '): ');
        return $at === false ? $warning : substr($warning, $at + 3);
    }
}
