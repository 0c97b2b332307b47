<?php

declare(strict_types=1);

// Stand-ins for the parts of Nextcloud Mail (5.x) the app's MailBridge uses:
// the three contracts (OCA\Mail\Contracts), the entities they pass around,
// and the few services the contracts need alongside (AccountService for
// the user's accounts, IMAPClientFactory for a connection,
// CopySentMessageHandler to file a sent message). Getter names follow
// Mail's magic Entity getters.

namespace OCA\Mail {
	class Account {
		public function __construct(private int $id, private string $userId, private string $email, private string $name) {
		}

		public function getId() {
			return $this->id;
		}

		public function getName() {
			return $this->name;
		}

		public function getEmail(): string {
			return $this->email;
		}

		public function getUserId() {
			return $this->userId;
		}
	}

	class Address {
		public function __construct(private ?string $label, private ?string $email) {
		}

		public static function fromRaw(string $label, string $email): self {
			return new self($label, $email);
		}

		public function getLabel(): ?string {
			return $this->label;
		}

		public function getEmail(): ?string {
			return $this->email;
		}
	}

	class AddressList {
		/** @param Address[] $addresses */
		public function __construct(private array $addresses = []) {
		}

		public function iterate(): \Generator {
			yield from $this->addresses;
		}
	}
}

namespace OCA\Mail\Db {
	use OCA\Mail\AddressList;
	use OCP\AppFramework\Db\Entity;

	/** Its getters are Entity's magic ones, as in Mail. */
	class Mailbox extends Entity {
		public function __construct(protected int $id, protected int $accountId, protected string $name) {
		}
	}

	/** Magic getters for its fields (Entity); the address lists are Mail's own methods. */
	class Message extends Entity {
		public function __construct(
			protected int $id,
			protected int $uid,
			protected int $mailboxId,
			protected string $subject,
			protected int $sentAt,
			protected bool $flagSeen,
			protected ?string $previewText,
			private AddressList $from,
			private AddressList $to,
			private AddressList $cc,
		) {
		}

		public function getFrom(): AddressList {
			return $this->from;
		}

		public function getTo(): AddressList {
			return $this->to;
		}

		public function getCc(): AddressList {
			return $this->cc;
		}
	}

	class Recipient {
		public const TYPE_FROM = 0;
		public const TYPE_TO = 1;
		public const TYPE_CC = 2;

		public int $type = 0;
		public string $label = '';
		public string $email = '';

		public function setType(int $type): void {
			$this->type = $type;
		}

		public function setLabel(string $label): void {
			$this->label = $label;
		}

		public function setEmail(string $email): void {
			$this->email = $email;
		}
	}

	class LocalMessage {
		public const TYPE_OUTGOING = 0;
		public const TYPE_DRAFT = 1;
		public const STATUS_RAW = 0;
		public const STATUS_SMPT_SEND_FAIL = 10;
		public const STATUS_PROCESSED = 12;
		public const STATUS_ERROR = 13;

		public array $fields = [];
		private array $recipients = [];
		private ?int $status = null;
		private ?string $raw = null;

		public function __call(string $name, array $arguments) {
			if (str_starts_with($name, 'set')) {
				$this->fields[lcfirst(substr($name, 3))] = $arguments[0];
				return null;
			}
			throw new \BadMethodCallException($name);
		}

		public function setRecipients(array $recipients): void {
			$this->recipients = $recipients;
		}

		public function getRecipients(): ?array {
			return $this->recipients;
		}

		public function setStatus(?int $status): void {
			$this->status = $status;
		}

		public function getStatus(): ?int {
			return $this->status;
		}

		public function setRaw(?string $raw): void {
			$this->raw = $raw;
		}

		public function getRaw(): ?string {
			return $this->raw;
		}
	}
}

namespace OCA\Mail\Exception {
	class ServiceException extends \Exception {
	}

	class ClientException extends \Exception {
	}
}

namespace OCA\Mail\Model {
	class IMAPMessage {
		public function __construct(private string $plain, private string $html = '') {
		}

		public function hasHtmlMessage(): bool {
			return $this->html !== '';
		}

		public function getHtmlBody(int $id): string {
			return $this->html;
		}

		public function getPlainBody(): string {
			return $this->plain;
		}
	}
}

namespace OCA\Mail\Contracts {
	use OCA\Mail\Account;
	use OCA\Mail\Db\LocalMessage;
	use OCA\Mail\Db\Mailbox;
	use OCA\Mail\Db\Message;
	use OCA\Mail\Model\IMAPMessage;

	interface IMailSearch {
		public const ORDER_NEWEST_FIRST = 'DESC';
		public const VIEW_SINGLETON = 'singleton';

		public function findMessages(Account $account, Mailbox $mailbox, string $sortOrder, ?string $filter, ?int $cursor, ?int $limit, ?string $userId, ?string $view): array;
	}

	interface IMailManager {
		public function getMailbox(string $uid, int $id): Mailbox;
		public function getMailboxes(Account $account, bool $forceSync = false): array;
		public function getMessage(string $uid, int $id): Message;
		public function getImapMessage(\Horde_Imap_Client_Socket $client, Account $account, Mailbox $mailbox, int $uid, bool $loadBody = false): IMAPMessage;
	}

	interface IMailTransmission {
		public function sendMessage(Account $account, LocalMessage $localMessage): void;
		public function saveLocalDraft(Account $account, LocalMessage $message): void;
	}
}

namespace OCA\Mail\Service {
	use OCA\Mail\Account;

	class AccountService {
		/** @param Account[] $accounts */
		public function __construct(private array $accounts = []) {
		}

		public function findByUserId(string $currentUserId): array {
			return array_values(array_filter($this->accounts, fn (Account $a) => $a->getUserId() === $currentUserId));
		}

		public function find(string $userId, int $id): Account {
			foreach ($this->findByUserId($userId) as $account) {
				if ($account->getId() === $id) {
					return $account;
				}
			}
			throw new \OCA\Mail\Exception\ClientException("Account $id does not exist");
		}
	}
}

namespace OCA\Mail\IMAP {
	class IMAPClientFactory {
		public int $clients = 0;

		public function getClient(\OCA\Mail\Account $account, bool $useCache = true): \Horde_Imap_Client_Socket {
			$this->clients++;
			return new \Horde_Imap_Client_Socket();
		}
	}
}

namespace OCA\Mail\Send {
	use OCA\Mail\Account;
	use OCA\Mail\Db\LocalMessage;

	class CopySentMessageHandler {
		public int $copies = 0;

		public function process(Account $account, LocalMessage $localMessage, \Horde_Imap_Client_Socket $client): LocalMessage {
			$this->copies++;
			$localMessage->setStatus(LocalMessage::STATUS_PROCESSED);
			return $localMessage;
		}
	}
}

namespace {
	class Horde_Imap_Client_Socket {
		public bool $loggedOut = false;

		public function logout(): void {
			$this->loggedOut = true;
		}
	}
}
