<?php

declare(strict_types=1);

namespace OCA\Tamebi\Tests\Unit;

use OCP\AppFramework\Http\Attribute\NoAdminRequired;
use OCP\AppFramework\Http\Attribute\NoCSRFRequired;
use OCP\AppFramework\Http\Attribute\PublicPage;
use PHPUnit\Framework\TestCase;

/**
 * appinfo/routes.php against the route table of docs/app-contract.md, and
 * each route's method against the way it is authenticated.
 */
final class RoutesTest extends TestCase {
	/** verb, path, controller#method, how Nextcloud lets it in (the controller checks the rest). */
	private const CONTRACT = [
		['GET', '/', 'page#index', 'nextcloud-session'],
		['POST', '/api/chat', 'chat#chat', 'app-checked'],
		['GET', '/api/conversations', 'chat#conversations', 'app-checked'],
		['GET', '/api/conversations/{id}', 'chat#conversation', 'app-checked'],
		['DELETE', '/api/conversations/{id}', 'chat#deleteConversation', 'app-checked'],
		['GET', '/api/memory', 'chat#memory', 'app-checked'],
		['POST', '/api/memory', 'chat#addMemory', 'app-checked'],
		['DELETE', '/api/memory/{id}', 'chat#deleteMemory', 'app-checked'],
		['GET', '/api/mail/status', 'mail#status', 'app-checked'],
		['GET', '/api/mail/search', 'mail#search', 'app-checked'],
		['GET', '/api/mail/messages/{id}', 'mail#message', 'app-checked'],
		['POST', '/api/mail/compose', 'mail#compose', 'app-checked'],
		['GET', '/api/mail/previews/{id}', 'mail#preview', 'app-checked'],
		['POST', '/api/mail/previews/{id}/send', 'mail#send', 'app-checked'],
		['POST', '/api/mail/previews/{id}/save', 'mail#save', 'app-checked'],
		['GET', '/api/app-password', 'app_password#status', 'app-checked'],
		['PUT', '/api/app-password', 'app_password#save', 'app-checked'],
		['DELETE', '/api/app-password', 'app_password#remove', 'app-checked'],
		['POST', '/api/ui', 'ui#store', 'app-checked'],
		['GET', '/ui/{id}', 'ui#show', 'nextcloud-session'],
	];

	public function testEveryContractRouteAndNoOther(): void {
		$routes = require dirname(__DIR__, 2) . '/appinfo/routes.php';
		$declared = array_map(fn (array $r) => [$r['verb'], $r['url'], $r['name']], $routes['routes']);
		$expected = array_map(fn (array $r) => [$r[0], $r[1], $r[2]], self::CONTRACT);
		self::assertEqualsCanonicalizing($expected, $declared);
	}

	public function testEachRouteMethodIsAuthenticatedAsDeclared(): void {
		foreach (self::CONTRACT as [, , $name, $access]) {
			[$controller, $method] = explode('#', $name);
			$class = 'OCA\\Tamebi\\Controller\\' . self::underscoreToCamelCase(ucfirst($controller)) . 'Controller';
			$method = self::underscoreToCamelCase($method);
			$reflection = new \ReflectionMethod($class, $method);
			$attributes = array_map(fn ($a) => $a->getName(), $reflection->getAttributes());
			self::assertContains(NoAdminRequired::class, $attributes, $name);
			self::assertContains(NoCSRFRequired::class, $attributes, $name);
			if ($access === 'nextcloud-session') {
				// Nextcloud's own login check (a page: redirect to login).
				self::assertNotContains(PublicPage::class, $attributes, $name);
			} else {
				// Public to Nextcloud only so the controller's Guard can answer
				// with the envelope; the Guard is its first call.
				self::assertContains(PublicPage::class, $attributes, $name);
				$source = implode('', array_slice(file($reflection->getFileName()), $reflection->getStartLine(), $reflection->getEndLine() - $reflection->getStartLine()));
				self::assertMatchesRegularExpression('/\A\s*\{?\s*(\$user = \$this->guard->(session|sessionOnly|bearer)\(\);|return \$this->forward\()/', $source, "$name must start with the guard");
			}
		}
	}

	public function testRouteNamesMapToClassesAsNextcloudMapsThem(): void {
		self::assertSame('AppPassword', self::underscoreToCamelCase(ucfirst('app_password')));
		self::assertSame('deleteConversation', self::underscoreToCamelCase('deleteConversation'));
		self::assertSame('Ui', self::underscoreToCamelCase(ucfirst('ui')));
	}

	/**
	 * Nextcloud's RouteParser: `app_password#x` → `AppPasswordController::x`
	 * (each `_` and the letter after it become that letter, upper case).
	 */
	private static function underscoreToCamelCase(string $name): string {
		return preg_replace_callback('/_[a-z]?/', static fn (array $m): string => strtoupper(ltrim($m[0], '_')), $name);
	}

	public function testSendAndSaveUseTheSessionOnlyGuard(): void {
		foreach (['send', 'save'] as $method) {
			$reflection = new \ReflectionMethod(\OCA\Tamebi\Controller\MailController::class, $method);
			$source = implode('', array_slice(file($reflection->getFileName()), $reflection->getStartLine(), $reflection->getEndLine() - $reflection->getStartLine()));
			self::assertStringContainsString('$this->guard->sessionOnly()', $source);
		}
	}

	public function testInfoXmlDeclaresTheAppAsTheTaskSays(): void {
		$info = simplexml_load_file(dirname(__DIR__, 2) . '/appinfo/info.xml');
		self::assertSame('tamebi', (string)$info->id);
		self::assertSame('Tamebi', (string)$info->namespace);
		self::assertSame('30', (string)$info->dependencies->nextcloud['min-version']);
		self::assertSame('32', (string)$info->dependencies->nextcloud['max-version']);
		self::assertSame('8.1', (string)$info->dependencies->php['min-version']);
	}
}
