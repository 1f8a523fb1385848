<?php

declare(strict_types=1);

namespace Trackway\Tests;

use Trackway\Exception\WebhookVerificationException;
use Trackway\Webhook;

// Every vector of the file all Trackway clients share.
$vectorsFile = json_decode((string) file_get_contents(__DIR__ . '/../../webhook-vectors.json'), true, 512, JSON_THROW_ON_ERROR);

foreach ($vectorsFile['vectors'] as $vector) {
    test('webhook vector: ' . $vector['name'], static function () use ($vector, $vectorsFile): void {
        try {
            $payload = Webhook::verify($vector['body'], $vector['headers'], $vector['secrets'], $vector['now'], $vectorsFile['tolerance_seconds']);
            $outcome = 'ok';
        } catch (WebhookVerificationException $error) {
            $outcome = $error->reason;
            assertTrue($error->getMessage() !== '', 'the error says why');
        }
        assertSame($vector['expect'], $outcome, 'outcome');
        if ($outcome === 'ok') {
            assertSame(json_decode($vector['body'], true), $payload, 'payload');
        }
    });
}

test('webhook vectors: the file has every case the issue names', static function () use ($vectorsFile): void {
    $expects = array_count_values(array_column($vectorsFile['vectors'], 'expect'));
    foreach (['ok', 'invalid_signature', 'timestamp_out_of_tolerance', 'missing_signature', 'invalid_timestamp'] as $code) {
        assertTrue(($expects[$code] ?? 0) > 0, "a vector expecting $code");
    }
});

test('webhook: $_SERVER-style and PSR-7-style headers are understood', static function () use ($vectorsFile): void {
    $valid = $vectorsFile['vectors'][0];
    $server = [];
    $psr7 = [];
    foreach ($valid['headers'] as $name => $value) {
        $server['HTTP_' . strtoupper(str_replace('-', '_', $name))] = $value;
        $psr7[$name] = [$value];
    }
    assertSame('event.tracked', Webhook::verify($valid['body'], $server, $valid['secrets'], $valid['now'])['event'], '$_SERVER');
    assertSame('event.tracked', Webhook::verify($valid['body'], $psr7, $valid['secrets'], $valid['now'])['event'], 'PSR-7');
});

test('webhook: no secret is a programming error, not a refused delivery', static function () use ($vectorsFile): void {
    $valid = $vectorsFile['vectors'][0];
    assertThrows(\InvalidArgumentException::class, static fn () => Webhook::verify($valid['body'], $valid['headers'], [], $valid['now']));
});

test('webhook: the current time is the default, so an old vector is too old', static function () use ($vectorsFile): void {
    $valid = $vectorsFile['vectors'][0];
    $error = assertThrows(WebhookVerificationException::class, static fn () => Webhook::verify($valid['body'], $valid['headers'], $valid['secrets']));
    assertSame('timestamp_out_of_tolerance', $error->reason, 'reason');
});
