<?php

declare(strict_types=1);

namespace Trackway\Tests;

final class AssertionFailed extends \RuntimeException
{
}

/** @var list<array{0: string, 1: callable}> */
$GLOBALS['trackway_tests'] = [];

function test(string $name, callable $case): void
{
    $GLOBALS['trackway_tests'][] = [$name, $case];
}

/** @return list<array{0: string, 1: callable}> */
function registered(): array
{
    return $GLOBALS['trackway_tests'];
}

function assertSame(mixed $expected, mixed $actual, string $what = ''): void
{
    if ($expected !== $actual) {
        throw new AssertionFailed(($what !== '' ? "$what: " : '') . 'expected ' . var_export($expected, true) . ', got ' . var_export($actual, true));
    }
}

function assertTrue(bool $condition, string $what): void
{
    if (!$condition) {
        throw new AssertionFailed($what);
    }
}

/** Runs `$fn`, which must throw a `$class`; returns it. */
function assertThrows(string $class, callable $fn): \Throwable
{
    try {
        $fn();
    } catch (\Throwable $error) {
        if ($error instanceof $class) {
            return $error;
        }
        throw new AssertionFailed("expected $class, got " . get_class($error) . ': ' . $error->getMessage());
    }
    throw new AssertionFailed("expected $class, nothing was thrown");
}

/** A port nothing listens on right now. */
function freePort(): int
{
    $socket = stream_socket_server('tcp://127.0.0.1:0');
    $name = stream_socket_get_name($socket, false);
    fclose($socket);
    return (int) substr($name, strrpos($name, ':') + 1);
}

/**
 * A stand-in server (`php -S` with tests/fixtures/server.php) on a free port, answering from
 * `$plan`; its request log is read with ->requests().
 */
final class StubServer
{
    public readonly string $url;
    private readonly string $state;
    /** @var resource */
    private $process;

    /** @param array<string, list<array<string, mixed>>> $plan */
    public function __construct(array $plan = [], int $eventsTotal = 0)
    {
        $this->state = sys_get_temp_dir() . '/trackway-php-test-' . bin2hex(random_bytes(6));
        mkdir($this->state);
        file_put_contents("{$this->state}/plan.json", json_encode((object) $plan));
        file_put_contents("{$this->state}/events_total", (string) $eventsTotal);
        $port = freePort();
        $this->url = "http://127.0.0.1:$port";
        $env = ['TRACKWAY_TEST_STATE' => $this->state, 'PATH' => getenv('PATH'), 'PHP_CLI_SERVER_WORKERS' => '4'];
        $this->process = proc_open(
            [PHP_BINARY, '-S', "127.0.0.1:$port", __DIR__ . '/fixtures/server.php'],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']],
            $pipes,
            null,
            $env,
        );
        $deadline = microtime(true) + 5;
        while (microtime(true) < $deadline) {
            $probe = @stream_socket_client("tcp://127.0.0.1:$port", $errno, $errstr, 0.2);
            if ($probe !== false) {
                fclose($probe);
                $GLOBALS['trackway_servers'][] = $this;
                return;
            }
            usleep(20_000);
        }
        throw new \RuntimeException('the stub server did not start');
    }

    /** @return list<array<string, mixed>> */
    public function requests(): array
    {
        $log = @file_get_contents("{$this->state}/log.jsonl") ?: '';
        return array_map(static fn ($line) => json_decode($line, true), array_values(array_filter(explode("\n", $log))));
    }

    public function stop(): void
    {
        if (is_resource($this->process)) {
            proc_terminate($this->process);
            proc_close($this->process);
        }
        foreach (glob("{$this->state}/*") as $file) {
            unlink($file);
        }
        @rmdir($this->state);
    }
}

function stopServers(): void
{
    foreach ($GLOBALS['trackway_servers'] ?? [] as $server) {
        $server->stop();
    }
    $GLOBALS['trackway_servers'] = [];
}
