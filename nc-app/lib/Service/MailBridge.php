<?php

declare(strict_types=1);

namespace OCA\Tamebi\Service;

use OCA\Mail\Account;
use OCA\Mail\AddressList;
use OCA\Mail\Contracts\IMailManager;
use OCA\Mail\Contracts\IMailSearch;
use OCA\Mail\Contracts\IMailTransmission;
use OCA\Mail\Db\LocalMessage;
use OCA\Mail\Db\Mailbox;
use OCA\Mail\Db\Message;
use OCA\Mail\Db\Recipient;
use OCA\Mail\IMAP\IMAPClientFactory;
use OCA\Mail\Send\CopySentMessageHandler;
use OCA\Mail\Service\AccountService;
use OCA\Tamebi\Db\PreviewStore;
use OCP\AppFramework\Utility\ITimeFactory;
use Psr\Log\LoggerInterface;

/**
 * Mail through Nextcloud Mail's own contracts, so no mail credential
 * exists in this stack: IMailSearch finds, IMailManager reads,
 * IMailTransmission sends or saves. Three of Mail's services fill the
 * gaps the contracts leave: AccountService (whose accounts these are),
 * IMAPClientFactory (a connection to read a body), CopySentMessageHandler
 * (filing a sent message in Sent, which Mail does after SMTP).
 *
 * The model composes; only the user sends. `compose` stores a preview and
 * never touches IMailTransmission; `send` and `save` are reachable only
 * from the session routes, once per preview.
 */
final class MailBridge {
	public const LIMIT_DEFAULT = 20;
	public const LIMIT_MAX = 50;
	public const SUBJECT_BYTES_MAX = 255;
	public const BODY_BYTES_MAX = 100000;
	public const RECIPIENTS_MAX = 100;
	/** Pages of Mail's search one request may read to fill one page of ours. */
	public const SEARCH_ROUNDS_MAX = 4;
	/** Doublings of one mailbox's batch when a single second fills it. */
	public const SEARCH_GROWTH_MAX = 6;

	public const ALREADY_DONE = 'This mail was already sent or saved. Compose a new one to send it again.';
	public const NOT_FOUND_PREVIEW = 'This preview does not exist or has expired. Compose the mail again.';
	public const NOT_FOUND_MESSAGE = 'This message does not exist in your mailboxes.';

	public function __construct(
		private IMailSearch $mailSearch,
		private IMailManager $mailManager,
		private IMailTransmission $mailTransmission,
		private AccountService $accountService,
		private IMAPClientFactory $clientFactory,
		private CopySentMessageHandler $copySentMessageHandler,
		private PreviewStore $previews,
		private ITimeFactory $timeFactory,
		private LoggerInterface $logger,
	) {
	}

	/**
	 * Messages newest first. Mail's search finds the first word in the
	 * subject, sender, To recipients or body; the app then keeps messages
	 * whose subject, sender, recipients or preview text hold every other
	 * word. Results of several mailboxes are merged up to the newest
	 * position every mailbox has been read to, so the order is exact.
	 *
	 * @return array{messages: list<array<string, mixed>>, nextCursor: ?string}
	 */
	public function search(string $uid, string $query, ?string $mailbox, int $limit, ?string $cursor): array {
		if ($limit < 1 || $limit > self::LIMIT_MAX) {
			throw new MailFailure(400, 'limit: a whole number from 1 to ' . self::LIMIT_MAX . '.');
		}
		$after = $cursor === null ? null : self::decodeCursor($cursor);
		$words = self::words($query);
		$filter = $words === [] ? null : self::filter($words[0]);
		$mailboxes = $this->mailboxes($uid, $mailbox);
		$names = [];
		foreach ($mailboxes as [, $box]) {
			$names[$box->getId()] = $box->getName();
		}

		$found = [];
		$exhausted = false;
		for ($round = 0; $round < self::SEARCH_ROUNDS_MAX; $round++) {
			[$rows, $frontier] = $this->round($uid, $mailboxes, $filter, $after, $limit + 1);
			$exhausted = $frontier === null;
			foreach ($rows as $message) {
				if (!$exhausted && self::older(self::position($message), $frontier)) {
					break;
				}
				if (self::matchesAll($message, array_slice($words, 1))) {
					$found[] = $message;
				}
			}
			if (count($found) > $limit || $exhausted) {
				break;
			}
			$after = $frontier;
		}

		$page = array_slice($found, 0, $limit);
		$next = null;
		if (count($found) > $limit) {
			$next = self::encodeCursor(self::position($page[$limit - 1]));
		} elseif (!$exhausted) {
			$next = self::encodeCursor($after);
		}
		return [
			'messages' => array_map(fn (Message $message) => $this->summary($message, $names), $page),
			'nextCursor' => $next,
		];
	}

	/** One message of the user's, its text as plain text. @return array<string, mixed> */
	public function read(string $uid, int $id): array {
		try {
			$message = $this->mailManager->getMessage($uid, $id);
			$mailbox = $this->mailManager->getMailbox($uid, $message->getMailboxId());
			$account = $this->accountService->find($uid, $mailbox->getAccountId());
		} catch (\Exception) {
			// Not the user's and not existing answer alike.
			throw new MailFailure(404, self::NOT_FOUND_MESSAGE);
		}
		$client = $this->clientFactory->getClient($account);
		try {
			$imapMessage = $this->mailManager->getImapMessage($client, $account, $mailbox, (int)$message->getUid(), true);
		} catch (\Exception $e) {
			$this->logger->warning('tamebi: a message body could not be loaded', ['exception' => $e]);
			throw new MailFailure(502, 'The mail server did not answer. Try again in a moment.');
		} finally {
			$client->logout();
		}
		$body = $imapMessage->getPlainBody();
		if (trim($body) === '' && $imapMessage->hasHtmlMessage()) {
			$body = self::htmlToText($imapMessage->getHtmlBody((int)$message->getId()));
		}
		return [
			'id' => (int)$message->getId(),
			'mailbox' => (string)$mailbox->getName(),
			'from' => self::addresses($message->getFrom())[0] ?? '',
			'to' => self::addresses($message->getTo()),
			'cc' => self::addresses($message->getCc()),
			'subject' => (string)$message->getSubject(),
			'date' => gmdate('Y-m-d\TH:i:s\Z', (int)$message->getSentAt()),
			'body' => $body,
		];
	}

	/**
	 * Store a preview for the user to review: not sent, not saved.
	 *
	 * @param mixed $input the decoded request body
	 * @return array<string, mixed>
	 */
	public function compose(string $uid, mixed $input): array {
		if (!is_array($input)) {
			throw new MailFailure(400, 'The body must be a JSON object with to, cc, subject and body.');
		}
		$to = self::recipients($input['to'] ?? null, 'to');
		$cc = self::recipients($input['cc'] ?? [], 'cc');
		if ($to === []) {
			throw new MailFailure(400, 'to: at least one recipient is needed.');
		}
		if (count($to) + count($cc) > self::RECIPIENTS_MAX) {
			throw new MailFailure(400, 'to, cc: at most ' . self::RECIPIENTS_MAX . ' recipients in all.');
		}
		$subject = self::text($input, 'subject', self::SUBJECT_BYTES_MAX);
		if (preg_match('/[\r\n]/', $subject) === 1) {
			throw new MailFailure(400, 'subject: must be one line.');
		}
		$body = self::text($input, 'body', self::BODY_BYTES_MAX);
		$accounts = $this->accountService->findByUserId($uid);
		if ($accounts === []) {
			throw new MailFailure(404, 'You have no mail account in Nextcloud Mail. Add one in the Mail app first.');
		}
		/** @var Account $account the user's first account sends */
		$account = $accounts[0];
		$payload = [
			'from' => $account->getEmail(),
			'to' => array_map(fn (array $r) => $r['text'], $to),
			'cc' => array_map(fn (array $r) => $r['text'], $cc),
			'subject' => $subject,
			'body' => $body,
		];
		$id = $this->previews->insert($uid, (int)$account->getId(), $payload, $this->timeFactory->getTime());
		return ['previewId' => $id] + $payload + ['preview' => self::previewText($payload)];
	}

	/** A stored preview, for the page. @return array<string, mixed> */
	public function preview(string $uid, string $id): array {
		$row = $this->previews->find($uid, $id, $this->timeFactory->getTime());
		if ($row === null) {
			throw new MailFailure(404, self::NOT_FOUND_PREVIEW);
		}
		return ['previewId' => $row['id']] + $row['payload'] + ['preview' => self::previewText($row['payload']), 'state' => $row['state']];
	}

	/** The human click: send once, file in Sent. @return array{previewId: string, state: string} */
	public function send(string $uid, string $id): array {
		[$account, $message] = $this->transmit(
			$uid,
			$id,
			PreviewStore::STATE_SENDING,
			LocalMessage::TYPE_OUTGOING,
			$this->mailTransmission->sendMessage(...),
			'tamebi: sending a previewed mail failed',
			'The mail could not be sent. Try again in a moment.',
		);
		if ($message->getRaw() === null || !in_array($message->getStatus(), [null, LocalMessage::STATUS_RAW], true)) {
			if ($message->getStatus() === LocalMessage::STATUS_ERROR) {
				// Mail itself refuses to retry these: the mail may be out.
				$this->previews->transition($uid, $id, PreviewStore::STATE_SENDING, PreviewStore::STATE_UNCERTAIN);
				throw new MailFailure(502, 'The mail server gave an unclear answer. Check your Sent folder before sending it again.');
			}
			$this->previews->transition($uid, $id, PreviewStore::STATE_SENDING, PreviewStore::STATE_STORED);
			throw new MailFailure(502, 'The mail could not be sent. Try again in a moment.');
		}
		$this->previews->transition($uid, $id, PreviewStore::STATE_SENDING, PreviewStore::STATE_SENT);
		$this->fileInSent($account, $message);
		return ['previewId' => $id, 'state' => PreviewStore::STATE_SENT];
	}

	/** The human click: save once as a draft in Drafts. @return array{previewId: string, state: string} */
	public function save(string $uid, string $id): array {
		$this->transmit(
			$uid,
			$id,
			PreviewStore::STATE_SAVING,
			LocalMessage::TYPE_DRAFT,
			$this->mailTransmission->saveLocalDraft(...),
			'tamebi: saving a previewed mail as a draft failed',
			'The draft could not be saved. Try again in a moment.',
		);
		$this->previews->transition($uid, $id, PreviewStore::STATE_SAVING, PreviewStore::STATE_SAVED);
		return ['previewId' => $id, 'state' => PreviewStore::STATE_SAVED];
	}

	/** The exact text that would go out. */
	public static function previewText(array $payload): string {
		$line = fn (string $name, string $value) => $value === '' ? "$name:" : "$name: $value";
		return implode("\n", [
			$line('From', $payload['from']),
			$line('To', implode(', ', $payload['to'])),
			$line('Cc', implode(', ', $payload['cc'])),
			$line('Subject', $payload['subject']),
			'',
			$payload['body'],
		]);
	}

	/**
	 * `local@domain` or `Name <local@domain>`.
	 *
	 * @return array{name: string, email: string, text: string}|null
	 */
	public static function parseAddress(string $text): ?array {
		$text = trim($text);
		$name = '';
		$email = $text;
		if (preg_match('/\A([^<>\r\n]*?)\s*<([^<>\s]+)>\z/u', $text, $match) === 1) {
			$name = trim($match[1], " \t\"");
			$email = $match[2];
		}
		if (preg_match('/[\x00-\x1f\x7f"]/', $name) === 1) {
			return null;
		}
		if (filter_var($email, FILTER_VALIDATE_EMAIL) === false) {
			return null;
		}
		return ['name' => $name, 'email' => $email, 'text' => $name === '' ? $email : "$name <$email>"];
	}

	/** @return array{0: array, 1: Account} the preview, now in `$to` */
	private function claim(string $uid, string $id, string $to): array {
		$row = $this->previews->find($uid, $id, $this->timeFactory->getTime());
		if ($row === null) {
			throw new MailFailure(404, self::NOT_FOUND_PREVIEW);
		}
		if (!$this->previews->transition($uid, $id, PreviewStore::STATE_STORED, $to)) {
			throw new MailFailure(409, self::ALREADY_DONE);
		}
		try {
			$account = $this->accountService->find($uid, $row['accountId']);
		} catch (\Exception) {
			$this->previews->transition($uid, $id, $to, PreviewStore::STATE_STORED);
			throw new MailFailure(404, 'The mail account of this preview no longer exists. Compose the mail again.');
		}
		return [$row, $account];
	}

	/**
	 * The click's first half, the same for send and save: claim the
	 * preview for `$inFlight`, build its message and hand it to Mail. When
	 * Mail throws, the preview is put back to stored (the click may be
	 * tried again) and the answer is the 502 `$failure`.
	 *
	 * @param \Closure(Account, LocalMessage): void $transmit IMailTransmission's send or save
	 * @return array{0: Account, 1: LocalMessage}
	 */
	private function transmit(string $uid, string $id, string $inFlight, int $type, \Closure $transmit, string $logLine, string $failure): array {
		[$row, $account] = $this->claim($uid, $id, $inFlight);
		$message = self::localMessage($row['payload'], $account, $type, $this->timeFactory->getTime());
		try {
			$transmit($account, $message);
		} catch (\Exception $e) {
			$this->logger->warning($logLine, ['exception' => $e]);
			$this->previews->transition($uid, $id, $inFlight, PreviewStore::STATE_STORED);
			throw new MailFailure(502, $failure);
		}
		return [$account, $message];
	}

	private function fileInSent(Account $account, LocalMessage $message): void {
		try {
			$client = $this->clientFactory->getClient($account);
			try {
				$this->copySentMessageHandler->process($account, $message, $client);
			} finally {
				$client->logout();
			}
		} catch (\Exception $e) {
			$this->logger->warning('tamebi: a sent mail could not be filed in Sent', ['exception' => $e]);
			return;
		}
		if ($message->getStatus() !== LocalMessage::STATUS_PROCESSED) {
			$this->logger->warning('tamebi: a sent mail was not filed in Sent (no Sent mailbox?)', ['status' => $message->getStatus()]);
		}
	}

	private static function localMessage(array $payload, Account $account, int $type, int $now): LocalMessage {
		$message = new LocalMessage();
		$message->setType($type);
		$message->setAccountId((int)$account->getId());
		$message->setSubject($payload['subject']);
		$message->setBodyPlain($payload['body']);
		$message->setBodyHtml(null);
		$message->setEditorBody($payload['body']);
		$message->setHtml(false);
		$message->setSendAt($now);
		$recipients = [];
		foreach ([[Recipient::TYPE_TO, $payload['to']], [Recipient::TYPE_CC, $payload['cc']]] as [$kind, $texts]) {
			foreach ($texts as $text) {
				$address = self::parseAddress($text);
				assert($address !== null, 'a stored preview holds only parsed addresses');
				$recipient = new Recipient();
				$recipient->setType($kind);
				$recipient->setLabel($address['name'] === '' ? $address['email'] : $address['name']);
				$recipient->setEmail($address['email']);
				$recipients[] = $recipient;
			}
		}
		$message->setRecipients($recipients);
		return $message;
	}

	/**
	 * The body's `$field` (absent: empty) when it is UTF-8 text of at most
	 * `$bytesMax` bytes; else the 400 naming the field.
	 *
	 * @param array<mixed> $input
	 */
	private static function text(array $input, string $field, int $bytesMax): string {
		$value = $input[$field] ?? '';
		if (!is_string($value) || !mb_check_encoding($value, 'UTF-8')) {
			throw new MailFailure(400, $field . ': must be text.');
		}
		if (strlen($value) > $bytesMax) {
			throw new MailFailure(400, $field . ': at most ' . $bytesMax . ' bytes.');
		}
		return $value;
	}

	/** @return list<array{name: string, email: string, text: string}> */
	private static function recipients(mixed $value, string $field): array {
		if (!is_array($value) || !array_is_list($value)) {
			throw new MailFailure(400, "$field: must be a list of addresses.");
		}
		$parsed = [];
		foreach ($value as $text) {
			$address = is_string($text) ? self::parseAddress($text) : null;
			if ($address === null) {
				throw new MailFailure(400, "$field: each address must be local@domain or Name <local@domain>.");
			}
			$parsed[] = $address;
		}
		return $parsed;
	}

	/** @return list<array{0: Account, 1: Mailbox}> */
	private function mailboxes(string $uid, ?string $name): array {
		$found = [];
		foreach ($this->accountService->findByUserId($uid) as $account) {
			foreach ($this->mailManager->getMailboxes($account) as $box) {
				if ($name === null || $box->getName() === $name || (strcasecmp($name, 'INBOX') === 0 && strcasecmp($box->getName(), 'INBOX') === 0)) {
					$found[] = [$account, $box];
				}
			}
		}
		return $found;
	}

	/**
	 * One batch from every mailbox, strictly older than `$after`, newest
	 * first; and the frontier: a position such that every mailbox has been
	 * read completely down to it (null when every mailbox was read to its
	 * end). Mail orders by send time alone and its cursor means "sent
	 * before", so a full batch is trusted only above its oldest second: the
	 * frontier is (that second, +∞), and that second is read again, whole,
	 * next round. A batch made only of that second grows until it reaches
	 * past it.
	 *
	 * @return array{0: list<Message>, 1: ?array{0: int, 1: int}}
	 */
	private function round(string $uid, array $mailboxes, ?string $filter, ?array $after, int $batch): array {
		$rows = [];
		$frontier = null;
		foreach ($mailboxes as [$account, $box]) {
			$fetch = $batch;
			$boxFrontier = null;
			for ($growth = 0; ; $growth++) {
				try {
					// Mail's cursor is "sent before": one second later keeps the ties.
					$batchRows = $this->mailSearch->findMessages($account, $box, IMailSearch::ORDER_NEWEST_FIRST, $filter, $after === null ? null : $after[0] + 1, $fetch, $uid, IMailSearch::VIEW_SINGLETON);
				} catch (\Exception $e) {
					// A mailbox Mail has not synchronised yet is skipped, not fatal.
					$this->logger->info('tamebi: a mailbox could not be searched', ['exception' => $e]);
					$batchRows = [];
				}
				if (count($batchRows) < $fetch) {
					// This mailbox is read to its end.
					$boxFrontier = null;
					break;
				}
				$oldestSecond = min(array_map(fn (Message $m) => (int)$m->getSentAt(), $batchRows));
				$boxFrontier = [$oldestSecond, PHP_INT_MAX];
				if ($after === null || self::older($boxFrontier, $after)) {
					break;
				}
				if ($growth === self::SEARCH_GROWTH_MAX) {
					// More messages in one second than a search reads: the
					// ones not read are skipped rather than paging forever.
					$this->logger->warning('tamebi: too many messages sent in one second to page through', ['second' => $oldestSecond]);
					$boxFrontier = [$oldestSecond, 0];
					break;
				}
				$fetch *= 2;
			}
			if ($boxFrontier !== null && ($frontier === null || self::older($frontier, $boxFrontier))) {
				$frontier = $boxFrontier;
			}
			foreach ($batchRows as $message) {
				if ($after === null || self::older(self::position($message), $after)) {
					$rows[(int)$message->getId()] = $message;
				}
			}
		}
		$rows = array_values($rows);
		usort($rows, fn (Message $a, Message $b) => self::position($b) <=> self::position($a));
		return [$rows, $frontier];
	}

	/** @return array{0: int, 1: int} sent time, then id: the order of results */
	private static function position(Message $message): array {
		return [(int)$message->getSentAt(), (int)$message->getId()];
	}

	private static function older(array $a, array $b): bool {
		return $a < $b;
	}

	private static function encodeCursor(array $position): string {
		return rtrim(strtr(base64_encode('v1:' . $position[0] . ':' . $position[1]), '+/', '-_'), '=');
	}

	/** @return array{0: int, 1: int} */
	private static function decodeCursor(string $cursor): array {
		$decoded = base64_decode(strtr($cursor, '-_', '+/'), true);
		if ($decoded === false || preg_match('/\Av1:(\d{1,19}):(\d{1,19})\z/', $decoded, $match) !== 1) {
			throw new MailFailure(400, 'cursor: not one this search gave. Search again without it.');
		}
		return [(int)$match[1], (int)$match[2]];
	}

	/** @return list<string> lowercase words */
	private static function words(string $query): array {
		$words = preg_split('/\s+/u', mb_strtolower(trim($query)), -1, PREG_SPLIT_NO_EMPTY);
		return $words === false ? [] : $words;
	}

	/**
	 * Mail's filter string for one word: any of subject, sender, To, body.
	 * The word is URL-encoded, as Mail's parser decodes it, so no query can
	 * add a filter token of its own.
	 */
	private static function filter(string $word): string {
		$value = rawurlencode($word);
		return "match:anyof subject:$value from:$value to:$value body:$value";
	}

	private static function matchesAll(Message $message, array $words): bool {
		if ($words === []) {
			return true;
		}
		$haystack = mb_strtolower(implode("\n", array_merge(
			[(string)$message->getSubject()],
			self::addresses($message->getFrom()),
			self::addresses($message->getTo()),
			self::addresses($message->getCc()),
			[(string)$message->getPreviewText()],
		)));
		foreach ($words as $word) {
			if (!str_contains($haystack, $word)) {
				return false;
			}
		}
		return true;
	}

	/** @return array<string, mixed> */
	private function summary(Message $message, array $names): array {
		return [
			'id' => (int)$message->getId(),
			'mailbox' => $names[$message->getMailboxId()] ?? '',
			'from' => self::addresses($message->getFrom())[0] ?? '',
			'to' => self::addresses($message->getTo()),
			'cc' => self::addresses($message->getCc()),
			'subject' => (string)$message->getSubject(),
			'date' => gmdate('Y-m-d\TH:i:s\Z', (int)$message->getSentAt()),
			'seen' => (bool)$message->getFlagSeen(),
			'preview' => (string)$message->getPreviewText(),
		];
	}

	/** @return list<string> `Name <email>`, or the bare address when there is no other name */
	private static function addresses(AddressList $list): array {
		$texts = [];
		foreach ($list->iterate() as $address) {
			$email = (string)$address->getEmail();
			$label = trim((string)$address->getLabel());
			$texts[] = $label === '' || $label === $email ? $email : "$label <$email>";
		}
		return $texts;
	}

	private static function htmlToText(string $html): string {
		$text = preg_replace(['#<(script|style)\b[^>]*>.*?</\1>#is', '#<br\s*/?>#i', '#</(p|div|li|tr|h[1-6])>#i'], ['', "\n", "\n"], $html) ?? '';
		return trim(html_entity_decode(strip_tags($text), ENT_QUOTES | ENT_HTML5, 'UTF-8'));
	}
}
