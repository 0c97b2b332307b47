<?php

declare(strict_types=1);

namespace OCA\Tamebi\Tests\Unit;

use OCA\Tamebi\Http\Relay;
use OCA\Tamebi\Http\StreamResponse;
use OCA\Tamebi\Tests\Doubles\FakeLogger;
use OCA\Tamebi\Tests\Doubles\FakeOutput;
use OCA\Tamebi\Tests\Doubles\OrchestratorServer;
use OCP\AppFramework\Http\ICallbackResponse;
use OCP\AppFramework\Http\IOutput;
use PHPUnit\Framework\TestCase;

final class StreamResponseTest extends TestCase {
	private static ?OrchestratorServer $server = null;

	public static function setUpBeforeClass(): void {
		self::$server = new OrchestratorServer();
	}

	public static function tearDownAfterClass(): void {
		self::$server?->stop();
		self::$server = null;
	}

	/** A sink that records each chunk with the time it arrived. */
	private function recordingSink(array &$chunks): \Closure {
		return static function (IOutput $output) use (&$chunks): \Closure {
			return static function (string $chunk) use (&$chunks): void {
				$chunks[] = [$chunk, microtime(true)];
			};
		};
	}

	private function response(string $url, string $method = 'POST', string $body = '{"id":"c1"}', ?\Closure $sinkFactory = null): StreamResponse {
		return new StreamResponse($url, $method, ['X-Request-Id' => 'req-1', 'Content-Type' => 'application/json'], $body, 'req-1', new FakeLogger(), $sinkFactory);
	}

	public function testItIsACallbackResponse(): void {
		self::assertInstanceOf(ICallbackResponse::class, $this->response('http://127.0.0.1:1/api/chat'));
	}

	public function testTheTransferNeverCollectsTheBody(): void {
		$output = new FakeOutput();
		$relay = new Relay($output, static function (string $chunk): void {
		}, 'req-1');
		foreach (['POST', 'GET', 'DELETE'] as $method) {
			$options = $this->response('http://127.0.0.1:1/api/chat', $method)->curlOptions($relay);
			self::assertArrayNotHasKey(CURLOPT_RETURNTRANSFER, $options, 'CURLOPT_RETURNTRANSFER buffers the whole stream');
			self::assertArrayNotHasKey(CURLOPT_FILE, $options);
			self::assertInstanceOf(\Closure::class, $options[CURLOPT_WRITEFUNCTION]);
			self::assertInstanceOf(\Closure::class, $options[CURLOPT_HEADERFUNCTION]);
			self::assertSame($method, $options[CURLOPT_CUSTOMREQUEST]);
		}
		$post = $this->response('http://127.0.0.1:1/api/chat', 'POST', '{"id":"c1"}')->curlOptions($relay);
		self::assertSame('{"id":"c1"}', $post[CURLOPT_POSTFIELDS]);
		self::assertContains('X-Request-Id: req-1', $post[CURLOPT_HTTPHEADER]);
		self::assertArrayNotHasKey(CURLOPT_POSTFIELDS, $this->response('http://127.0.0.1:1/api/chat', 'GET')->curlOptions($relay));
	}

	public function testTheWriteCallbackPassesEachChunkOnSeparatelyInOrderAfterTheStatus(): void {
		$output = new FakeOutput();
		$seen = [];
		$relay = new Relay($output, static function (string $chunk) use (&$seen, $output): void {
			$seen[] = $chunk;
			$output->setOutput($chunk);
		}, 'req-1');
		$options = $this->response('http://127.0.0.1:1/api/chat')->curlOptions($relay);
		$header = $options[CURLOPT_HEADERFUNCTION];
		$write = $options[CURLOPT_WRITEFUNCTION];
		foreach (["HTTP/1.1 100 Continue\r\n", "\r\n", "HTTP/1.1 200 OK\r\n", "Content-Type: text/event-stream\r\n", "x-vercel-ai-ui-message-stream: v1\r\n", "X-Accel-Buffering: no\r\n", "Cache-Control: no-cache\r\n", "Set-Cookie: a=b\r\n", "X-Internal: leak\r\n", "\r\n"] as $line) {
			self::assertSame(strlen($line), $header(null, $line));
		}
		self::assertSame([], $output->events, 'nothing goes out before the first chunk');
		foreach (["data: {\"type\":\"start\"}\n\n", "data: {\"type\":\"text-delta\"}\n\n", "data: [DONE]\n\n"] as $chunk) {
			self::assertSame(strlen($chunk), $write(null, $chunk));
		}
		$relay->finish(true);
		self::assertSame(["data: {\"type\":\"start\"}\n\n", "data: {\"type\":\"text-delta\"}\n\n", "data: [DONE]\n\n"], $seen);
		self::assertSame([
			['status', 200],
			['header', 'Content-Type: text/event-stream'],
			['header', 'X-Vercel-Ai-Ui-Message-Stream: v1'],
			['header', 'X-Accel-Buffering: no'],
			['header', 'Cache-Control: no-cache'],
			['output', "data: {\"type\":\"start\"}\n\n"],
			['output', "data: {\"type\":\"text-delta\"}\n\n"],
			['output', "data: [DONE]\n\n"],
		], $output->events);
	}

	public function testTheDefaultSinkPrintsThroughNextcloudsOutputAndFlushes(): void {
		$output = new FakeOutput();
		$sink = StreamResponse::flushingSink($output);
		$level = ob_get_level();
		ob_start();
		try {
			$sink('data: 1');
		} finally {
			// The sink ends output buffers so no layer sits on a chunk.
			self::assertLessThanOrEqual($level, ob_get_level());
			while (ob_get_level() < $level) {
				ob_start();
			}
		}
		self::assertSame([['output', 'data: 1']], $output->events);
	}

	public function testAStreamArrivesChunkByChunkAsTheOrchestratorWritesIt(): void {
		$chunks = [];
		$output = new FakeOutput();
		$started = microtime(true);
		$this->response(self::$server->url . '/api/chat', 'POST', '{"id":"c1"}', $this->recordingSink($chunks))->callback($output);
		$texts = array_map(fn ($c) => $c[0], $chunks);
		self::assertGreaterThanOrEqual(3, count($chunks), 'three frames, three writes at least');
		self::assertStringStartsWith('data: {"type":"start"', $texts[0]);
		self::assertStringEndsWith("data: [DONE]\n\n", end($texts));
		self::assertStringContainsString('"delta":"Bonjour"', implode('', $texts));
		// The first frame was passed on well before the last was written.
		self::assertGreaterThan(0.3, end($chunks)[1] - $chunks[0][1]);
		self::assertLessThan(0.2, $chunks[0][1] - $started);
		self::assertSame(200, $output->code);
		// PHP's server adds a charset to the type; what it sent is what goes on.
		self::assertSame([
			'Content-Type: text/event-stream;charset=UTF-8',
			'Cache-Control: no-cache',
			'X-Vercel-Ai-Ui-Message-Stream: v1',
			'X-Accel-Buffering: no',
		], $output->headers());
	}

	public function testAnOrchestratorErrorIsPassedOnAsItIs(): void {
		$chunks = [];
		$output = new FakeOutput();
		$this->response(self::$server->url . '/api/conversations', 'GET', '', $this->recordingSink($chunks))->callback($output);
		self::assertSame(404, $output->code);
		self::assertSame('{"error":{"message":"This conversation does not exist (it may have been deleted). Start a new one.","requestId":"req-1"}}', implode('', array_map(fn ($c) => $c[0], $chunks)));
	}

	public function testAnAnswerWithoutABodyKeepsItsStatus(): void {
		$chunks = [];
		$output = new FakeOutput();
		$this->response(self::$server->url . '/api/memory/7', 'DELETE', '', $this->recordingSink($chunks))->callback($output);
		self::assertSame(204, $output->code);
		self::assertSame([], $chunks);
	}

	public function testAnUnreachableOrchestratorIs502WithTheEnvelope(): void {
		$probe = stream_socket_server('tcp://127.0.0.1:0');
		$closedPort = (int)substr(strrchr(stream_socket_get_name($probe, false), ':'), 1);
		fclose($probe);
		$chunks = [];
		$output = new FakeOutput();
		$this->response("http://127.0.0.1:$closedPort/api/chat", 'POST', '{}', $this->recordingSink($chunks))->callback($output);
		self::assertSame(502, $output->code);
		self::assertSame(['Content-Type: application/json; charset=utf-8'], $output->headers());
		$envelope = json_decode(implode('', array_map(fn ($c) => $c[0], $chunks)), true);
		self::assertSame(['error' => ['message' => 'The assistant is not reachable right now. Try again in a moment.', 'requestId' => 'req-1']], $envelope);
	}
}
