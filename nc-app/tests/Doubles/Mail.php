<?php

declare(strict_types=1);

namespace OCA\Tamebi\Tests\Doubles;

use OCA\Mail\Account;
use OCA\Mail\Address;
use OCA\Mail\AddressList;
use OCA\Mail\Contracts\IMailManager;
use OCA\Mail\Contracts\IMailSearch;
use OCA\Mail\Contracts\IMailTransmission;
use OCA\Mail\Db\LocalMessage;
use OCA\Mail\Db\Mailbox;
use OCA\Mail\Db\Message;
use OCA\Mail\Model\IMAPMessage;
use OCP\AppFramework\Db\DoesNotExistException;
use Psr\Container\ContainerInterface;

/**
 * Nextcloud Mail for two users, in memory: accounts, mailboxes, messages
 * with bodies. Search follows Mail's `findMessages`: newest first, `sent
 * before` cursor, a limit, and the filter string the bridge builds
 * (`match:anyof subject:W from:W to:W body:W`).
 */
final class FakeMail implements IMailSearch, IMailManager {
	/** @var list<Account> */
	public array $accounts = [];
	/** @var array<int, Mailbox> */
	public array $mailboxes = [];
	/** @var array<int, array{message: Message, owner: string, body: string}> */
	public array $messages = [];
	/** @var list<array{mailbox: string, filter: ?string, cursor: ?int, limit: ?int}> */
	public array $searches = [];

	public function addAccount(int $id, string $uid, string $email, string $name): Account {
		return $this->accounts[] = new Account($id, $uid, $email, $name);
	}

	public function addMailbox(int $id, Account $account, string $name): Mailbox {
		return $this->mailboxes[$id] = new Mailbox($id, (int)$account->getId(), $name);
	}

	/** @param list<string> $to */
	public function addMessage(int $id, Mailbox $mailbox, string $from, array $to, string $subject, string $date, string $body, bool $seen = false): Message {
		$owner = '';
		foreach ($this->accounts as $account) {
			if ($account->getId() === $mailbox->getAccountId()) {
				$owner = (string)$account->getUserId();
			}
		}
		$message = new Message($id, 1000 + $id, (int)$mailbox->getId(), $subject, (int)strtotime($date), $seen, mb_substr($body, 0, 40), self::list([$from]), self::list($to), new AddressList());
		$this->messages[$id] = ['message' => $message, 'owner' => $owner, 'body' => $body];
		return $message;
	}

	/** `Name <a@b>` or `a@b` into Mail's address list. */
	public static function list(array $texts): AddressList {
		return new AddressList(array_map(static function (string $text): Address {
			if (preg_match('/\A(.*?)\s*<(.+)>\z/', $text, $m) === 1) {
				return new Address($m[1], $m[2]);
			}
			return new Address(null, $text);
		}, $texts));
	}

	public function findMessages(Account $account, Mailbox $mailbox, string $sortOrder, ?string $filter, ?int $cursor, ?int $limit, ?string $userId, ?string $view): array {
		$this->searches[] = ['mailbox' => $mailbox->getName(), 'filter' => $filter, 'cursor' => $cursor, 'limit' => $limit];
		$word = null;
		if ($filter !== null && preg_match('/subject:(\S+)/', $filter, $m) === 1) {
			$word = mb_strtolower(urldecode($m[1]));
		}
		$rows = [];
		foreach ($this->messages as $entry) {
			$message = $entry['message'];
			if ($message->getMailboxId() !== $mailbox->getId()) {
				continue;
			}
			if ($cursor !== null && $message->getSentAt() >= $cursor) {
				continue;
			}
			if ($word !== null) {
				$text = mb_strtolower(implode(' ', [$message->getSubject(), self::texts($message->getFrom()), self::texts($message->getTo()), $entry['body']]));
				if (!str_contains($text, $word)) {
					continue;
				}
			}
			$rows[] = $message;
		}
		// Mail orders by send time only; ties come in whatever order the
		// database likes. Here: oldest id first, the opposite of the bridge.
		usort($rows, fn (Message $a, Message $b) => [$b->getSentAt(), $a->getId()] <=> [$a->getSentAt(), $b->getId()]);
		return array_slice($rows, 0, $limit);
	}

	public function getMailbox(string $uid, int $id): Mailbox {
		return $this->mailboxes[$id] ?? throw new DoesNotExistException('no mailbox');
	}

	public function getMailboxes(Account $account, bool $forceSync = false): array {
		return array_values(array_filter($this->mailboxes, fn (Mailbox $m) => $m->getAccountId() === $account->getId()));
	}

	public function getMessage(string $uid, int $id): Message {
		$entry = $this->messages[$id] ?? null;
		if ($entry === null || $entry['owner'] !== $uid) {
			throw new DoesNotExistException('no message');
		}
		return $entry['message'];
	}

	public function getImapMessage(\Horde_Imap_Client_Socket $client, Account $account, Mailbox $mailbox, int $uid, bool $loadBody = false): IMAPMessage {
		foreach ($this->messages as $entry) {
			if ($entry['message']->getUid() === $uid) {
				return new IMAPMessage($entry['body']);
			}
		}
		throw new DoesNotExistException('no such uid');
	}

	private static function texts(AddressList $list): string {
		$out = [];
		foreach ($list->iterate() as $address) {
			$out[] = $address->getLabel() . ' ' . $address->getEmail();
		}
		return implode(' ', $out);
	}
}

/** IMailTransmission that records what it was asked and answers as scripted. */
final class FakeTransmission implements IMailTransmission {
	/** @var list<LocalMessage> */
	public array $sent = [];
	/** @var list<LocalMessage> */
	public array $drafts = [];
	/** @var \Closure(LocalMessage): void what a send does to the message; default: success */
	public \Closure $onSend;
	/** @var ?\Closure(LocalMessage): void what a draft save does (throw: Mail refused); default: nothing */
	public ?\Closure $onSave = null;

	public function __construct() {
		$this->onSend = static function (LocalMessage $message): void {
			$message->setRaw("raw mime");
			$message->setStatus(LocalMessage::STATUS_RAW);
		};
	}

	public function sendMessage(Account $account, LocalMessage $localMessage): void {
		$this->sent[] = $localMessage;
		($this->onSend)($localMessage);
	}

	public function saveLocalDraft(Account $account, LocalMessage $message): void {
		$this->drafts[] = $message;
		if ($this->onSave !== null) {
			($this->onSave)($message);
		}
	}

	public function calls(): int {
		return count($this->sent) + count($this->drafts);
	}
}

final class FakeContainer implements ContainerInterface {
	public function __construct(
		private array $services,
	) {
	}

	public function get(string $id) {
		return $this->services[$id] ?? throw new \LogicException("no service $id");
	}

	public function has(string $id): bool {
		return isset($this->services[$id]);
	}
}
