<?php

declare(strict_types=1);

namespace OCA\Tamebi\Tests\Doubles;

/**
 * The stand-in orchestrator (tests/fixtures/orchestrator.php) on a free
 * loopback port, served by PHP's built-in server without output
 * buffering. Stopped by its own process handle, never by name.
 */
final class OrchestratorServer {
	/** A start that takes longer than this fails the test. */
	public const START_TIMEOUT_SECONDS = 10;

	/** @var resource */
	private $process;
	public string $url;

	public function __construct() {
		$probe = stream_socket_server('tcp://127.0.0.1:0', $errno, $error);
		if ($probe === false) {
			throw new \RuntimeException("no free port: $error");
		}
		$port = (int)substr(strrchr(stream_socket_get_name($probe, false), ':'), 1);
		fclose($probe);
		$router = dirname(__DIR__) . '/fixtures/orchestrator.php';
		$command = [PHP_BINARY, '-d', 'output_buffering=0', '-d', 'implicit_flush=1', '-S', "127.0.0.1:$port", $router];
		$process = proc_open($command, [1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
		if ($process === false) {
			throw new \RuntimeException('php -S did not start');
		}
		$this->process = $process;
		$this->url = "http://127.0.0.1:$port";
		$deadline = microtime(true) + self::START_TIMEOUT_SECONDS;
		while (($socket = @stream_socket_client("tcp://127.0.0.1:$port", $errno, $error, 0.2)) === false) {
			if (microtime(true) > $deadline) {
				$this->stop();
				throw new \RuntimeException('php -S did not listen in time');
			}
			usleep(50000);
		}
		fclose($socket);
	}

	public function stop(): void {
		if (is_resource($this->process)) {
			proc_terminate($this->process);
			proc_close($this->process);
		}
	}
}
