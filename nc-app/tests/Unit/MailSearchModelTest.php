<?php

declare(strict_types=1);

namespace OCA\Tamebi\Tests\Unit;

use OCA\Mail\IMAP\IMAPClientFactory;
use OCA\Mail\Send\CopySentMessageHandler;
use OCA\Mail\Service\AccountService;
use OCA\Tamebi\Db\PreviewStore;
use OCA\Tamebi\Service\MailBridge;
use OCA\Tamebi\Tests\Doubles\FakeLogger;
use OCA\Tamebi\Tests\Doubles\FakeMail;
use OCA\Tamebi\Tests\Doubles\FakeTime;
use OCA\Tamebi\Tests\Doubles\FakeTransmission;
use OCA\Tamebi\Tests\Doubles\SqliteConnection;
use PHPUnit\Framework\TestCase;

/**
 * Paging a search across mailboxes, checked against a naive model: every
 * page, concatenated, is the user's matching messages newest first, each
 * once. Seeded; the seed is in the failure message.
 */
final class MailSearchModelTest extends TestCase {
	private const WORDS = ['apollo', 'budget', 'lunch', 'slides', 'report'];

	public function seeds(): array {
		return array_map(fn ($seed) => [$seed], range(1, 25));
	}

	/** @dataProvider seeds */
	public function testPagesConcatenateToTheNaiveAnswer(int $seed): void {
		mt_srand($seed);
		$mail = new FakeMail();
		$alice = $mail->addAccount(1, 'alice', 'alice@example.com', 'Alice');
		$work = $mail->addAccount(2, 'alice', 'alice@work.example.com', 'Alice');
		$boxes = [$mail->addMailbox(10, $alice, 'INBOX'), $mail->addMailbox(11, $alice, 'Archive'), $mail->addMailbox(20, $work, 'INBOX')];
		$count = mt_rand(0, 40);
		for ($id = 1; $id <= $count; $id++) {
			$subject = self::WORDS[mt_rand(0, 4)] . ' ' . self::WORDS[mt_rand(0, 4)];
			$body = 'about ' . self::WORDS[mt_rand(0, 4)];
			// Few distinct seconds, so ties are common.
			$date = gmdate('Y-m-d\TH:i:s\Z', 1767225600 + mt_rand(0, 12) * 60);
			$mail->addMessage($id, $boxes[mt_rand(0, 2)], 'x@example.com', ['alice@example.com'], $subject, $date, $body);
		}
		$bridge = new MailBridge($mail, $mail, new FakeTransmission(), new AccountService($mail->accounts), new IMAPClientFactory(), new CopySentMessageHandler(), new PreviewStore(new SqliteConnection()), new FakeTime(), new FakeLogger());

		foreach (['', 'apollo', 'budget slides', 'lunch about'] as $query) {
			foreach ([null, 'INBOX'] as $mailbox) {
				foreach ([1, 3, 20] as $limit) {
					$expected = self::naive($mail, $query, $mailbox);
					$got = [];
					$cursor = null;
					for ($page = 0; $page <= $count + 1; $page++) {
						$answer = $bridge->search('alice', $query, $mailbox, $limit, $cursor);
						self::assertLessThanOrEqual($limit, count($answer['messages']));
						$got = array_merge($got, array_column($answer['messages'], 'id'));
						$cursor = $answer['nextCursor'];
						if ($cursor === null) {
							break;
						}
					}
					self::assertNull($cursor, "seed $seed: paging did not end");
					self::assertSame($expected, $got, "seed $seed, query '$query', mailbox " . var_export($mailbox, true) . ", limit $limit");
				}
			}
		}
	}

	/** The bridge's documented semantics, written the slow, obvious way. */
	private static function naive(FakeMail $mail, string $query, ?string $mailbox): array {
		$words = preg_split('/\s+/', strtolower(trim($query)), -1, PREG_SPLIT_NO_EMPTY);
		$rows = [];
		foreach ($mail->messages as $entry) {
			$message = $entry['message'];
			$box = $mail->mailboxes[$message->getMailboxId()];
			if ($entry['owner'] !== 'alice' || ($mailbox !== null && $box->getName() !== $mailbox)) {
				continue;
			}
			$first = strtolower($message->getSubject() . ' x@example.com alice@example.com ' . $entry['body']);
			$rest = strtolower($message->getSubject() . ' x@example.com alice@example.com ' . $message->getPreviewText());
			if ($words !== [] && !str_contains($first, $words[0])) {
				continue;
			}
			foreach (array_slice($words, 1) as $word) {
				if (!str_contains($rest, $word)) {
					continue 2;
				}
			}
			$rows[] = [$message->getSentAt(), $message->getId()];
		}
		rsort($rows);
		return array_map(fn ($row) => $row[1], $rows);
	}
}
