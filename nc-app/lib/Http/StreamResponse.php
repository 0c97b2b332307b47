<?php

declare(strict_types=1);

namespace OCA\Tamebi\Http;

use OCP\AppFramework\Http\ICallbackResponse;
use OCP\AppFramework\Http\IOutput;
use OCP\AppFramework\Http\Response;
use Psr\Log\LoggerInterface;

/**
 * The orchestrator's answer, passed on chunk by chunk as it arrives.
 *
 * Nextcloud calls `callback()` after sending the response's headers and
 * without buffering, so curl runs there with a write callback that hands
 * each chunk to a sink which prints and flushes it. Never
 * CURLOPT_RETURNTRANSFER: it collects the whole body and turns a
 * token-by-token stream into one late blob. If a reply appears all at once
 * in the browser while the orchestrator logs it streaming, something is
 * buffering again (see docs/nc-app.md for the web server's share).
 */
class StreamResponse extends Response implements ICallbackResponse {
	public const CONNECT_TIMEOUT_SECONDS = 5;
	/** A stream silent this long is cut (an agent step may think for minutes). */
	public const LOW_SPEED_TIME_SECONDS = 600;

	/**
	 * @param array<string, string> $headers the request headers for the orchestrator
	 * @param (\Closure(IOutput): \Closure(string): void)|null $sinkFactory test seam; default: print and flush
	 */
	public function __construct(
		private string $url,
		private string $method,
		private array $headers,
		private string $body,
		private string $requestId,
		private LoggerInterface $logger,
		private ?\Closure $sinkFactory = null,
	) {
		parent::__construct();
	}

	public function callback(IOutput $output) {
		$sink = $this->sinkFactory !== null ? ($this->sinkFactory)($output) : self::flushingSink($output);
		$relay = new Relay($output, $sink, $this->requestId);
		$curl = curl_init();
		curl_setopt_array($curl, $this->curlOptions($relay));
		$ok = curl_exec($curl);
		$errno = curl_errno($curl);
		if ($errno !== 0) {
			$this->logger->warning('tamebi: the orchestrator transfer failed', [
				'curl_errno' => $errno,
				'curl_error' => curl_error($curl),
				'started' => $relay->committed(),
			]);
		}
		curl_close($curl);
		$relay->finish($ok !== false && $errno === 0);
	}

	/**
	 * The curl options for one transfer, every byte of the answer routed
	 * through the relay.
	 *
	 * @return array<int, mixed>
	 */
	public function curlOptions(Relay $relay): array {
		$headerLines = ['Expect:'];
		foreach ($this->headers as $name => $value) {
			$headerLines[] = $name . ': ' . $value;
		}
		$options = [
			CURLOPT_URL => $this->url,
			CURLOPT_CUSTOMREQUEST => $this->method,
			CURLOPT_HTTPHEADER => $headerLines,
			CURLOPT_HEADERFUNCTION => \Closure::fromCallable([$relay, 'header']),
			CURLOPT_WRITEFUNCTION => \Closure::fromCallable([$relay, 'write']),
			CURLOPT_FOLLOWLOCATION => false,
			CURLOPT_CONNECTTIMEOUT => self::CONNECT_TIMEOUT_SECONDS,
			CURLOPT_LOW_SPEED_LIMIT => 1,
			CURLOPT_LOW_SPEED_TIME => self::LOW_SPEED_TIME_SECONDS,
			CURLOPT_HTTP_VERSION => CURL_HTTP_VERSION_1_1,
			CURLOPT_TCP_NODELAY => true,
			CURLOPT_NOSIGNAL => true,
		];
		if ($this->method !== 'GET' && $this->method !== 'HEAD') {
			$options[CURLOPT_POSTFIELDS] = $this->body;
		}
		return $options;
	}

	/**
	 * The same response with another sink (the test seam).
	 *
	 * @param \Closure(IOutput): \Closure(string): void $sinkFactory
	 */
	public function withSinkFactory(\Closure $sinkFactory): static {
		$copy = clone $this;
		$copy->sinkFactory = $sinkFactory;
		return $copy;
	}

	/** @return array<string, string> */
	public function upstreamHeaders(): array {
		return $this->headers;
	}

	public function upstreamBody(): string {
		return $this->body;
	}

	public function upstreamUrl(): string {
		return $this->url;
	}

	/**
	 * Print a chunk through Nextcloud's output and push it to the client at
	 * once. The first call ends any output buffer PHP or a web server
	 * setting started, so nothing below this sits on a chunk.
	 *
	 * @return \Closure(string): void
	 */
	public static function flushingSink(IOutput $output): \Closure {
		$buffersEnded = false;
		return static function (string $chunk) use ($output, &$buffersEnded): void {
			if (!$buffersEnded) {
				$buffersEnded = true;
				while (ob_get_level() > 0 && @ob_end_flush()) {
				}
			}
			$output->setOutput($chunk);
			flush();
		};
	}
}
