<?php

declare(strict_types=1);

namespace Trackway;

use Trackway\Exception\WebhookVerificationException;

/**
 * Proof that a delivery came from Trackway, was not altered, and is not an old message replayed.
 *
 * With the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`),
 * which Trackway always sends, the signature covers the message id and the timestamp too, and a
 * timestamp more than the tolerance (5 minutes) from now is refused, so a captured delivery
 * cannot be replayed later. Only without them is `X-Service-Signature` (body only) used.
 */
final class Webhook
{
    public const DEFAULT_TOLERANCE = 300;

    /**
     * Checks a delivery against each of `$secrets` (pass old and new while a rotation overlaps)
     * and returns the parsed payload; throws WebhookVerificationException otherwise.
     *
     * @param string $rawBody The exact bytes received (`file_get_contents('php://input')`), before any parsing.
     * @param array<string, string|list<string>> $headers Any key case: `getallheaders()`, a PSR-7
     *        `$request->getHeaders()`, or `$_SERVER` (its `HTTP_*` keys are understood).
     * @param list<string> $secrets `whsec_…` secrets.
     * @param int|null $now Unix time to check against; default the current time.
     * @param int $tolerance Seconds `webhook-timestamp` may be from now, either way.
     * @return array<string, mixed> The payload: `['event' => 'event.tracked', 'data' => [...], ...]`.
     */
    public static function verify(
        string $rawBody,
        array $headers,
        array $secrets,
        ?int $now = null,
        int $tolerance = self::DEFAULT_TOLERANCE,
    ): array {
        $secrets = array_values(array_filter($secrets, static fn ($s) => is_string($s) && $s !== ''));
        if ($secrets === []) {
            throw new \InvalidArgumentException('Webhook::verify: no secret given');
        }
        $headers = self::normaliseHeaders($headers);
        $standard = $headers['webhook-signature'] ?? null;
        $service = $headers['x-service-signature'] ?? null;

        if ($standard !== null) {
            $id = $headers['webhook-id'] ?? null;
            $timestamp = $headers['webhook-timestamp'] ?? null;
            if ($id === null || $timestamp === null || preg_match('/^\d{1,12}$/', $timestamp) !== 1) {
                throw new WebhookVerificationException(
                    'invalid_timestamp',
                    'webhook-id and a numeric webhook-timestamp must accompany webhook-signature',
                );
            }
            $now ??= time();
            if (abs($now - (int) $timestamp) > $tolerance) {
                throw new WebhookVerificationException(
                    'timestamp_out_of_tolerance',
                    "webhook-timestamp is more than {$tolerance} s from now: refused as a possible replay",
                );
            }
            $signatures = [];
            foreach (explode(' ', $standard) as $entry) {
                if (str_starts_with($entry, 'v1,')) {
                    $decoded = base64_decode(substr($entry, 3), true);
                    if ($decoded !== false) {
                        $signatures[] = $decoded;
                    }
                }
            }
            $signed = "{$id}.{$timestamp}.{$rawBody}";
            $verified = false;
            foreach ($secrets as $secret) {
                // The Standard Webhooks key is the base64 after `whsec_`.
                $key = base64_decode(str_starts_with($secret, 'whsec_') ? substr($secret, 6) : $secret, true);
                if ($key === false || $key === '') {
                    continue;
                }
                $expected = hash_hmac('sha256', $signed, $key, true);
                foreach ($signatures as $signature) {
                    if (hash_equals($expected, $signature)) {
                        $verified = true;
                        break 2;
                    }
                }
            }
        } elseif ($service !== null) {
            $verified = false;
            if (preg_match('/^sha256=((?:[0-9a-fA-F]{2})+)$/', $service, $match) === 1) {
                $signature = strtolower($match[1]);
                foreach ($secrets as $secret) {
                    // X-Service-Signature is keyed with the whole secret string, `whsec_` included.
                    if (hash_equals(hash_hmac('sha256', $rawBody, $secret), $signature)) {
                        $verified = true;
                        break;
                    }
                }
            }
        } else {
            throw new WebhookVerificationException(
                'missing_signature',
                'No webhook-signature or X-Service-Signature header',
            );
        }

        if (!$verified) {
            throw new WebhookVerificationException(
                'invalid_signature',
                'The signature matches none of the given secrets',
            );
        }
        try {
            $payload = json_decode($rawBody, true, 512, JSON_THROW_ON_ERROR);
        } catch (\JsonException) {
            $payload = null;
        }
        if (!is_array($payload)) {
            throw new WebhookVerificationException('invalid_payload', 'The signed body is not a JSON object');
        }
        return $payload;
    }

    /**
     * Lower-case names, first value of a list; `$_SERVER`'s `HTTP_WEBHOOK_ID` becomes `webhook-id`.
     *
     * @param array<mixed> $headers
     * @return array<string, string>
     */
    private static function normaliseHeaders(array $headers): array
    {
        $out = [];
        foreach ($headers as $name => $value) {
            if (!is_string($name)) {
                continue;
            }
            $name = strtolower($name);
            if (str_starts_with($name, 'http_')) {
                $name = str_replace('_', '-', substr($name, 5));
            }
            if (is_array($value)) {
                $value = $value[array_key_first($value)] ?? null;
            }
            if (is_string($value) && !isset($out[$name])) {
                $out[$name] = $value;
            }
        }
        return $out;
    }
}
