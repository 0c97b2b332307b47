<?php

declare(strict_types=1);

namespace OCA\Tamebi\Http;

use OCA\Tamebi\Service\Envelope;
use OCP\AppFramework\Http\IOutput;

/**
 * What curl's callbacks do with the orchestrator's answer: remember its
 * status and the headers worth copying, and hand each body chunk to the
 * sink the moment it arrives. The status and headers go out just before
 * the first chunk (PHP sends headers with the first byte), or at the end
 * for an answer without a body. Nothing sent yet and the transfer failed:
 * the 502 envelope instead.
 */
final class Relay {
	/** Copied from the orchestrator's answer, in the contract's spelling. */
	public const COPIED_HEADERS = [
		'content-type' => 'Content-Type',
		'cache-control' => 'Cache-Control',
		'x-vercel-ai-ui-message-stream' => 'X-Vercel-Ai-Ui-Message-Stream',
		'x-accel-buffering' => 'X-Accel-Buffering',
	];

	private int $status = 0;
	/** @var array<string, string> */
	private array $headers = [];
	private bool $committed = false;

	/**
	 * @param \Closure(string): void $sink writes one chunk to the browser and flushes it
	 */
	public function __construct(
		private IOutput $output,
		private \Closure $sink,
		private string $requestId,
	) {
	}

	/** CURLOPT_HEADERFUNCTION: one header line, CRLF included. */
	public function header(mixed $curl, string $line): int {
		$trimmed = rtrim($line, "\r\n");
		if (preg_match('#\AHTTP/\S+\s+(\d{3})#', $trimmed, $match) === 1) {
			// A new status line: an interim 1xx answer's headers are dropped.
			$this->status = (int)$match[1];
			$this->headers = [];
		} elseif (str_contains($trimmed, ':')) {
			[$name, $value] = explode(':', $trimmed, 2);
			$canonical = self::COPIED_HEADERS[strtolower(trim($name))] ?? null;
			if ($canonical !== null) {
				$this->headers[$canonical] = trim($value);
			}
		}
		return strlen($line);
	}

	/** CURLOPT_WRITEFUNCTION: one chunk of the body, passed on at once. */
	public function write(mixed $curl, string $chunk): int {
		if (!$this->committed) {
			$this->commit();
		}
		if ($chunk !== '') {
			($this->sink)($chunk);
		}
		return strlen($chunk);
	}

	/** After curl_exec: an empty answer still gets its status; a failure before any byte, the 502. */
	public function finish(bool $transferred): void {
		if ($this->committed) {
			return;
		}
		if ($transferred && $this->status >= 200) {
			$this->commit();
			return;
		}
		$this->committed = true;
		$this->output->setHttpResponseCode(502);
		$this->output->setHeader('Content-Type: application/json; charset=utf-8');
		($this->sink)(Envelope::json(Envelope::ORCHESTRATOR_UNREACHABLE, $this->requestId));
	}

	public function committed(): bool {
		return $this->committed;
	}

	private function commit(): void {
		$this->committed = true;
		$this->output->setHttpResponseCode($this->status >= 200 ? $this->status : 502);
		foreach ($this->headers as $name => $value) {
			$this->output->setHeader($name . ': ' . $value);
		}
	}
}
