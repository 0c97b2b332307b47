<?php

declare(strict_types=1);

namespace OCA\Tamebi\Tests\Unit;

use OCA\Tamebi\Service\Signer;
use PHPUnit\Framework\TestCase;

final class SignerTest extends TestCase {
	public function signatureVectors(): array {
		$vectors = Vectors::load();
		$cases = [];
		foreach ($vectors['signatures'] as $vector) {
			$cases[$vector['name']] = [$vectors['secret'], $vector];
		}
		return $cases;
	}

	/** @dataProvider signatureVectors */
	public function testEverySignatureVectorIsWhatTheSignerComputes(string $secret, array $vector): void {
		$signer = new Signer($secret);
		self::assertSame($vector['sha256'], hash('sha256', $vector['body']));
		$route = [$vector['nonce'], $vector['method'], $vector['path'], $vector['body']];
		self::assertSame($vector['canonical'], Signer::canonical($vector['uid'], $vector['timestamp'], ...$route));
		self::assertSame($vector['signature'], $signer->signature($vector['uid'], $vector['timestamp'], ...$route));
		self::assertSame([
			'X-Tamebi-Uid' => $vector['uid'],
			'X-Tamebi-Timestamp' => $vector['timestamp'],
			'X-Tamebi-Nonce' => $vector['nonce'],
			'X-Tamebi-Signature' => $vector['signature'],
		], $signer->headers($vector['uid'], (int)$vector['timestamp'], ...$route));
	}

	public function testTheVectorFileHasEveryKindOfVector(): void {
		$vectors = Vectors::load();
		self::assertCount(3, $vectors['signatures']);
		self::assertGreaterThanOrEqual(7, count($vectors['bodies']));
		self::assertGreaterThanOrEqual(12, count($vectors['uids']));
	}

	public function uidVectors(): array {
		$cases = [];
		foreach (Vectors::load()['uids'] as $i => $vector) {
			$cases["#$i " . json_encode($vector['uid'])] = [$vector['uid'], $vector['valid']];
		}
		return $cases;
	}

	/** @dataProvider uidVectors */
	public function testEveryUidVectorIsJudgedAsNextcloudDoes(string $uid, bool $valid): void {
		self::assertSame($valid, Signer::uidIsValid($uid));
	}

	public function testAnInvalidUidIsNeverSigned(): void {
		$this->expectException(\InvalidArgumentException::class);
		(new Signer(str_repeat('s', 32)))->headers('a/b', 1767225600, Signer::nonce(), 'GET', '/api/memory', '');
	}

	public function testASecretShorterThan32BytesIsRefused(): void {
		new Signer(str_repeat('s', 32));
		$this->expectException(\InvalidArgumentException::class);
		new Signer(str_repeat('s', 31));
	}

	public function testTheSignatureCoversEveryByteOfTheBody(): void {
		$signer = new Signer(str_repeat('k', 40));
		self::assertNotSame(
			$signer->signature('alice', '1767225600', 'n0nce-0123456789ab', 'POST', '/api/chat', '{"a":1}'),
			$signer->signature('alice', '1767225600', 'n0nce-0123456789ab', 'POST', '/api/chat', '{"a":1} '),
		);
	}

	public function testTheSignatureBindsTheRouteAndEachRequestHasItsOwnNonce(): void {
		$signer = new Signer(str_repeat('k', 40));
		$get = $signer->signature('alice', '1767225600', 'n0nce-0123456789ab', 'GET', '/api/memory', '');
		self::assertNotSame($get, $signer->signature('alice', '1767225600', 'n0nce-0123456789ab', 'DELETE', '/api/memory', ''));
		self::assertNotSame($get, $signer->signature('alice', '1767225600', 'n0nce-0123456789ab', 'GET', '/api/conversations', ''));
		self::assertNotSame(Signer::nonce(), Signer::nonce());
		self::assertMatchesRegularExpression('/\A[0-9a-f]{32}\z/', Signer::nonce());
	}

	public function testAMalformedNonceIsNeverSent(): void {
		$this->expectException(\InvalidArgumentException::class);
		(new Signer(str_repeat('s', 32)))->headers('alice', 1767225600, 'short', 'GET', '/api/memory', '');
	}
}
