<?php

declare(strict_types=1);

namespace OCA\Tamebi\Tests\Unit;

use OCA\Mail\Db\LocalMessage;
use OCA\Mail\Db\Recipient;
use OCA\Mail\IMAP\IMAPClientFactory;
use OCA\Mail\Send\CopySentMessageHandler;
use OCA\Mail\Service\AccountService;
use OCA\Tamebi\Controller\MailController;
use OCA\Tamebi\Db\PreviewStore;
use OCA\Tamebi\Service\MailBridge;
use OCA\Tamebi\Service\MailContracts;
use OCA\Tamebi\Tests\Doubles\FakeContainer;
use OCA\Tamebi\Tests\Doubles\FakeLogger;
use OCA\Tamebi\Tests\Doubles\FakeMail;
use OCA\Tamebi\Tests\Doubles\FakeRequest;
use OCA\Tamebi\Tests\Doubles\FakeTime;
use OCA\Tamebi\Tests\Doubles\FakeTransmission;
use OCA\Tamebi\Tests\Doubles\FakeUser;
use OCA\Tamebi\Tests\Doubles\SqliteConnection;
use OCP\AppFramework\Http\JSONResponse;
use PHPUnit\Framework\TestCase;

final class MailControllerTest extends TestCase {
	use GuardedCase;

	private const REQUEST_ID = 'req-mail-1';
	private const BEARER = ['Authorization' => 'Bearer eyJ.nextcloud.token'];
	private const SESSION = ['requesttoken' => 'tok'];

	private FakeMail $mail;
	private FakeTransmission $transmission;
	private CopySentMessageHandler $copySent;
	private IMAPClientFactory $clients;
	private FakeTime $time;
	private PreviewStore $previews;
	private AccountService $accounts;

	protected function setUp(): void {
		$this->mail = new FakeMail();
		$alice = $this->mail->addAccount(1, 'alice', 'alice@example.com', 'Alice Martin');
		$bob = $this->mail->addAccount(2, 'bob', 'bob@example.com', 'Bob Stone');
		$inbox = $this->mail->addMailbox(10, $alice, 'INBOX');
		$sent = $this->mail->addMailbox(11, $alice, 'Sent');
		$bobInbox = $this->mail->addMailbox(20, $bob, 'INBOX');
		$this->mail->addMessage(1, $inbox, 'Chloé Dubois <chloe.dubois@example.com>', ['alice@example.com'], 'Budget Apollo validé', '2026-03-14T09:12:00Z', 'Bonjour Alice, Le budget de 40 000 € est validé.');
		$this->mail->addMessage(2, $inbox, 'Marc <marc@example.com>', ['alice@example.com'], 'Stand-up', '2026-03-15T08:00:00Z', 'The stand-up moves to 10:00.', true);
		$this->mail->addMessage(3, $sent, 'alice@example.com', ['Bob Stone <bob@example.com>'], 'Apollo slides', '2026-03-16T17:30:00Z', 'Here are the slides for Apollo.');
		$this->mail->addMessage(4, $inbox, 'Chloé Dubois <chloe.dubois@example.com>', ['alice@example.com'], 'Lunch', '2026-03-13T12:00:00Z', 'Lunch on Friday about the budget?');
		$this->mail->addMessage(9, $bobInbox, 'ceo@example.com', ['bob@example.com'], 'Apollo budget secret', '2026-03-17T10:00:00Z', 'For Bob only.');
		$this->transmission = new FakeTransmission();
		$this->copySent = new CopySentMessageHandler();
		$this->clients = new IMAPClientFactory();
		$this->accounts = new AccountService($this->mail->accounts);
		$this->signIn(new FakeUser('alice'));
		$this->time = new FakeTime(1767225600);
		$this->previews = new PreviewStore(new SqliteConnection());
	}

	/** @param list<string>|null $mailContracts Mail's names the controller checks (default: the real ones). */
	private function controller(array $headers, array $params = [], bool $csrfPasses = true, ?array $mailContracts = null): MailController {
		$request = new FakeRequest($headers, $params, self::REQUEST_ID, $csrfPasses);
		$bridge = new MailBridge($this->mail, $this->mail, $this->transmission, $this->accounts, $this->clients, $this->copySent, $this->previews, $this->time, new FakeLogger());
		return new MailController($request, $this->guard($request), $this->raw, new FakeContainer([MailBridge::class => $bridge]), $mailContracts ?? MailContracts::REQUIRED);
	}

	private function compose(array $input): JSONResponse {
		$this->raw->bodyBytes = json_encode($input);
		return $this->controller(self::BEARER)->compose();
	}

	private function composed(): string {
		$response = $this->compose(['to' => ['Bob Stone <bob@example.com>'], 'cc' => [], 'subject' => 'Stand-up', 'body' => 'Bob, the stand-up moves to 10:00.']);
		self::assertSame(200, $response->getStatus());
		return $response->getData()['previewId'];
	}

	public function testComposeStoresAPreviewAndNeverTouchesTransmission(): void {
		$response = $this->compose(['to' => ['bob@example.com'], 'cc' => [], 'subject' => 'Stand-up', 'body' => 'Bob, the stand-up moves to 10:00.']);
		self::assertSame(200, $response->getStatus());
		$data = $response->getData();
		self::assertMatchesRegularExpression('/\A[0-9a-f]{32}\z/', $data['previewId']);
		self::assertSame("From: alice@example.com\nTo: bob@example.com\nCc:\nSubject: Stand-up\n\nBob, the stand-up moves to 10:00.", $data['preview']);
		self::assertSame(['previewId', 'from', 'to', 'cc', 'subject', 'body', 'preview'], array_keys($data));
		self::assertSame(0, $this->transmission->calls());
		self::assertSame(0, $this->clients->clients);
		self::assertSame('stored', $this->previews->find('alice', $data['previewId'], $this->time->now)['state']);
	}

	public function testComposeSaysWhichFieldIsWrong(): void {
		$cases = [
			[['to' => [], 'subject' => 's', 'body' => 'b'], 'to: at least one recipient is needed.'],
			[['to' => ['not an address'], 'subject' => 's', 'body' => 'b'], 'to: each address must be local@domain or Name <local@domain>.'],
			[['to' => ['a@example.com'], 'cc' => ['Eve <eve@@example.com>'], 'subject' => 's', 'body' => 'b'], 'cc: each address must be local@domain or Name <local@domain>.'],
			[['to' => ['a@example.com'], 'subject' => str_repeat('é', 128), 'body' => 'b'], 'subject: at most 255 bytes.'],
			[['to' => ['a@example.com'], 'subject' => "Hi\r\nBcc: eve@example.com", 'body' => 'b'], 'subject: must be one line.'],
			[['to' => ['a@example.com'], 'subject' => 's', 'body' => str_repeat('x', 100001)], 'body: at most 100000 bytes.'],
			[['to' => 'a@example.com', 'subject' => 's', 'body' => 'b'], 'to: must be a list of addresses.'],
			[['to' => ['a@example.com'], 'subject' => 42, 'body' => 'b'], 'subject: must be text.'],
			[['to' => ['a@example.com'], 'subject' => 's', 'body' => ['b']], 'body: must be text.'],
		];
		foreach ($cases as [$input, $message]) {
			self::assertEnvelope($this->compose($input), 400, $message);
		}
		$this->raw->bodyBytes = 'not json';
		self::assertEnvelope($this->controller(self::BEARER)->compose(), 400, 'The body must be a JSON object with to, cc, subject and body.');
		self::assertSame(0, $this->transmission->calls());
	}

	public function testSendCallsTransmissionOnceThenAnswers409(): void {
		$id = $this->composed();
		$first = $this->controller(self::SESSION)->send($id);
		self::assertSame(200, $first->getStatus());
		self::assertSame(['previewId' => $id, 'state' => 'sent'], $first->getData());
		self::assertCount(1, $this->transmission->sent);
		self::assertSame(1, $this->copySent->copies, 'filed in Sent');

		$message = $this->transmission->sent[0];
		self::assertSame(LocalMessage::TYPE_OUTGOING, $message->fields['type']);
		self::assertSame('Stand-up', $message->fields['subject']);
		self::assertSame('Bob, the stand-up moves to 10:00.', $message->fields['bodyPlain']);
		self::assertFalse($message->fields['html']);
		$recipient = $message->getRecipients()[0];
		self::assertSame([Recipient::TYPE_TO, 'Bob Stone', 'bob@example.com'], [$recipient->type, $recipient->label, $recipient->email]);

		self::assertEnvelope($this->controller(self::SESSION)->send($id), 409, 'This mail was already sent or saved. Compose a new one to send it again.');
		self::assertEnvelope($this->controller(self::SESSION)->save($id), 409, 'This mail was already sent or saved. Compose a new one to send it again.');
		self::assertCount(1, $this->transmission->sent);
		self::assertCount(0, $this->transmission->drafts);
	}

	public function testSaveStoresADraftOnce(): void {
		$id = $this->composed();
		self::assertSame(['previewId' => $id, 'state' => 'saved'], $this->controller(self::SESSION)->save($id)->getData());
		self::assertCount(1, $this->transmission->drafts);
		self::assertSame(LocalMessage::TYPE_DRAFT, $this->transmission->drafts[0]->fields['type']);
		self::assertSame(409, $this->controller(self::SESSION)->send($id)->getStatus());
		self::assertCount(0, $this->transmission->sent);
	}

	public function testABearerOnSendOrSaveIs403EvenWithASession(): void {
		$id = $this->composed();
		foreach (['Bearer eyJ.nextcloud.token', 'bearer x', 'Bearer'] as $authorization) {
			$headers = ['requesttoken' => 'tok', 'Authorization' => $authorization];
			self::assertEnvelope($this->controller($headers)->send($id), 403, 'Sending or saving mail needs your click in the chat page.');
			self::assertEnvelope($this->controller($headers)->save($id), 403, 'Sending or saving mail needs your click in the chat page.');
		}
		self::assertSame(0, $this->transmission->calls());
		self::assertSame('stored', $this->previews->find('alice', $id, $this->time->now)['state']);
	}

	public function testSendNeedsTheSessionAndItsCsrfToken(): void {
		$id = $this->composed();
		self::assertSame(412, $this->controller(self::SESSION, [], false)->send($id)->getStatus());
		$this->userSession->user = null;
		self::assertEnvelope($this->controller(self::SESSION)->send($id), 401, 'Your Nextcloud session has ended. Reload the page to sign in again.');
		self::assertSame(0, $this->transmission->calls());
	}

	public function testAnotherUsersPreviewIsNotFound(): void {
		$id = $this->composed();
		$this->userSession->user = new FakeUser('bob');
		self::assertEnvelope($this->controller(self::SESSION)->send($id), 404, 'This preview does not exist or has expired. Compose the mail again.');
		self::assertEnvelope($this->controller(self::SESSION)->preview($id), 404, 'This preview does not exist or has expired. Compose the mail again.');
		self::assertSame(0, $this->transmission->calls());
	}

	public function testAFailedSendCanBeRetriedAndAnUnclearOneCannot(): void {
		$id = $this->composed();
		$this->transmission->onSend = static function (LocalMessage $message): void {
			$message->setStatus(LocalMessage::STATUS_SMPT_SEND_FAIL);
		};
		self::assertEnvelope($this->controller(self::SESSION)->send($id), 502, 'The mail could not be sent. Try again in a moment.');
		self::assertSame('stored', $this->previews->find('alice', $id, $this->time->now)['state']);

		$this->transmission->onSend = static function (LocalMessage $message): void {
			$message->setStatus(LocalMessage::STATUS_ERROR);
		};
		self::assertEnvelope($this->controller(self::SESSION)->send($id), 502, 'The mail server gave an unclear answer. Check your Sent folder before sending it again.');
		self::assertSame(409, $this->controller(self::SESSION)->send($id)->getStatus());
		self::assertCount(2, $this->transmission->sent);
	}

	public function testWhenMailThrowsOnSendOrSaveTheAnswerIs502AndTheClickCanBeRepeated(): void {
		$id = $this->composed();
		$this->transmission->onSend = static function (): void {
			throw new \RuntimeException('SMTP connection reset');
		};
		self::assertEnvelope($this->controller(self::SESSION)->send($id), 502, 'The mail could not be sent. Try again in a moment.');
		self::assertSame('stored', $this->previews->find('alice', $id, $this->time->now)['state']);
		$this->transmission->onSave = static function (): void {
			throw new \RuntimeException('IMAP quota exceeded');
		};
		self::assertEnvelope($this->controller(self::SESSION)->save($id), 502, 'The draft could not be saved. Try again in a moment.');
		self::assertSame('stored', $this->previews->find('alice', $id, $this->time->now)['state']);
		$this->transmission->onSave = null;
		self::assertSame(['previewId' => $id, 'state' => 'saved'], $this->controller(self::SESSION)->save($id)->getData());
		self::assertCount(1, $this->transmission->sent);
		self::assertCount(2, $this->transmission->drafts);
	}

	public function testThePageReadsAPreviewWithItsState(): void {
		$id = $this->composed();
		$data = $this->controller(self::SESSION)->preview($id)->getData();
		self::assertSame('stored', $data['state']);
		self::assertSame("From: alice@example.com\nTo: Bob Stone <bob@example.com>\nCc:\nSubject: Stand-up\n\nBob, the stand-up moves to 10:00.", $data['preview']);
		self::assertSame(412, $this->controller(self::SESSION, [], false)->preview($id)->getStatus());
	}

	public function testBearerRoutesNeedABearerAndAnAcceptedOne(): void {
		self::assertEnvelope($this->controller(self::SESSION)->search(), 401, 'This route needs a Nextcloud access token (Authorization: Bearer).');
		self::assertEnvelope($this->controller(self::SESSION)->message('1'), 401, 'This route needs a Nextcloud access token (Authorization: Bearer).');
		$this->raw->bodyBytes = '{"to":["bob@example.com"],"subject":"s","body":"b"}';
		self::assertEnvelope($this->controller(self::SESSION)->compose(), 401, 'This route needs a Nextcloud access token (Authorization: Bearer).');
		$this->userSession->user = null; // user_oidc did not accept the token
		self::assertEnvelope($this->controller(self::BEARER)->search(), 401, 'The access token was not accepted. Get a new one and try again.');
	}

	public function testStatusSaysMailIsThereToABearerOnly(): void {
		$response = $this->controller(self::BEARER)->status();
		self::assertSame(200, $response->getStatus());
		self::assertSame(['available' => true], $response->getData());
		self::assertEnvelope($this->controller(self::SESSION)->status(), 401, 'This route needs a Nextcloud access token (Authorization: Bearer).');
	}

	public function testEveryMailRouteSaysMailUnavailableWhenAContractIsMissing(): void {
		// Mail disabled (no autoloader) or a release that moved IMailManager.
		$moved = array_map(
			fn (string $name) => $name === 'OCA\\Mail\\Contracts\\IMailManager' ? 'OCA\\Mail\\Contracts\\Moved\\IMailManager' : $name,
			MailContracts::REQUIRED,
		);
		self::assertNotSame(MailContracts::REQUIRED, $moved, 'IMailManager is one of the contracts checked');
		self::assertSame(['OCA\\Mail\\Contracts\\Moved\\IMailManager'], MailContracts::missing($moved));
		self::assertSame([], MailContracts::missing(), 'the stubs provide every contract');
		$unavailable = ['error' => [
			'message' => 'Nextcloud Mail is not available on this Nextcloud, so the assistant cannot reach your mail. Ask your administrator.',
			'requestId' => 'req-mail-1',
			'code' => 'mail_unavailable',
		]];
		$this->raw->bodyBytes = '{"to":["bob@example.com"],"subject":"s","body":"b"}';
		$bearer = fn () => $this->controller(self::BEARER, [], true, $moved);
		$session = fn () => $this->controller(self::SESSION, [], true, $moved);
		foreach ([
			'status' => $bearer()->status(),
			'search' => $bearer()->search(),
			'message' => $bearer()->message('1'),
			'compose' => $bearer()->compose(),
			'preview' => $session()->preview('x'),
			'send' => $session()->send('x'),
			'save' => $session()->save('x'),
		] as $route => $response) {
			self::assertSame(503, $response->getStatus(), $route);
			self::assertSame($unavailable, $response->getData(), $route);
		}
		self::assertSame(0, $this->transmission->calls());
		// Authentication still comes first: no bearer, no word about mail.
		self::assertSame(401, $this->controller(self::SESSION, [], true, $moved)->status()->getStatus());
	}

	public function testSearchIsNewestFirstWithEveryWordAndTheUsersMailOnly(): void {
		$data = $this->controller(self::BEARER, ['query' => 'apollo'])->search()->getData();
		self::assertSame([3, 1], array_column($data['messages'], 'id'));
		self::assertNull($data['nextCursor']);
		self::assertSame([
			'id' => 1,
			'mailbox' => 'INBOX',
			'from' => 'Chloé Dubois <chloe.dubois@example.com>',
			'to' => ['alice@example.com'],
			'cc' => [],
			'subject' => 'Budget Apollo validé',
			'date' => '2026-03-14T09:12:00Z',
			'seen' => false,
			'preview' => 'Bonjour Alice, Le budget de 40 000 € est',
		], $data['messages'][1]);

		$data = $this->controller(self::BEARER, ['query' => 'BUDGET chloé'])->search()->getData();
		self::assertSame([1, 4], array_column($data['messages'], 'id'));

		$data = $this->controller(self::BEARER, ['query' => 'apollo', 'mailbox' => 'INBOX'])->search()->getData();
		self::assertSame([1], array_column($data['messages'], 'id'));
	}

	public function testSearchPagesWithTheCursor(): void {
		$ids = [];
		$cursor = '';
		for ($page = 0; $page < 5; $page++) {
			$data = $this->controller(self::BEARER, ['limit' => '1', 'cursor' => $cursor])->search()->getData();
			$ids = array_merge($ids, array_column($data['messages'], 'id'));
			if ($data['nextCursor'] === null) {
				break;
			}
			$cursor = $data['nextCursor'];
		}
		self::assertSame([3, 2, 1, 4], $ids);
		self::assertNull($data['nextCursor']);
		self::assertEnvelope($this->controller(self::BEARER, ['cursor' => 'garbage'])->search(), 400, 'cursor: not one this search gave. Search again without it.');
		self::assertEnvelope($this->controller(self::BEARER, ['limit' => '51'])->search(), 400, 'limit: a whole number from 1 to 50.');
		self::assertEnvelope($this->controller(self::BEARER, ['limit' => 'ten'])->search(), 400, 'limit: a whole number from 1 to 50.');
	}

	public function testAQueryCannotAddMailFilterTokens(): void {
		$this->controller(self::BEARER, ['query' => 'is:starred apollo'])->search();
		foreach ($this->mail->searches as $search) {
			self::assertSame('match:anyof subject:is%3Astarred from:is%3Astarred to:is%3Astarred body:is%3Astarred', $search['filter']);
		}
	}

	public function testReadGivesThePlainTextAndHidesOtherUsersMessages(): void {
		$data = $this->controller(self::BEARER)->message('2')->getData();
		self::assertSame([
			'id' => 2,
			'mailbox' => 'INBOX',
			'from' => 'Marc <marc@example.com>',
			'to' => ['alice@example.com'],
			'cc' => [],
			'subject' => 'Stand-up',
			'date' => '2026-03-15T08:00:00Z',
			'body' => 'The stand-up moves to 10:00.',
		], $data);
		self::assertSame(1, $this->clients->clients);
		foreach (['9', '999', 'abc', '0'] as $id) {
			self::assertEnvelope($this->controller(self::BEARER)->message($id), 404, 'This message does not exist in your mailboxes.');
		}
	}
}
