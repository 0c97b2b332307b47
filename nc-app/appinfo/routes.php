<?php

declare(strict_types=1);

// Every route of docs/app-contract.md. Nextcloud answers each under
// /apps/tamebi/… and /index.php/apps/tamebi/…; `name` is controller#method.
return [
	'routes' => [
		// The chat page (session).
		['name' => 'page#index', 'url' => '/', 'verb' => 'GET'],

		// The chat proxy and what it relays (session + CSRF).
		['name' => 'chat#chat', 'url' => '/api/chat', 'verb' => 'POST'],
		['name' => 'chat#conversations', 'url' => '/api/conversations', 'verb' => 'GET'],
		['name' => 'chat#conversation', 'url' => '/api/conversations/{id}', 'verb' => 'GET'],
		['name' => 'chat#deleteConversation', 'url' => '/api/conversations/{id}', 'verb' => 'DELETE'],
		['name' => 'chat#memory', 'url' => '/api/memory', 'verb' => 'GET'],
		['name' => 'chat#addMemory', 'url' => '/api/memory', 'verb' => 'POST'],
		['name' => 'chat#deleteMemory', 'url' => '/api/memory/{id}', 'verb' => 'DELETE'],

		// Mail for mcp-mail (Nextcloud-audience bearer).
		['name' => 'mail#status', 'url' => '/api/mail/status', 'verb' => 'GET'],
		['name' => 'mail#search', 'url' => '/api/mail/search', 'verb' => 'GET'],
		['name' => 'mail#message', 'url' => '/api/mail/messages/{id}', 'verb' => 'GET'],
		['name' => 'mail#compose', 'url' => '/api/mail/compose', 'verb' => 'POST'],

		// Mail previews for the page (session + CSRF; send and save: session only).
		['name' => 'mail#preview', 'url' => '/api/mail/previews/{id}', 'verb' => 'GET'],
		['name' => 'mail#send', 'url' => '/api/mail/previews/{id}/send', 'verb' => 'POST'],
		['name' => 'mail#save', 'url' => '/api/mail/previews/{id}/save', 'verb' => 'POST'],

		// App-password mode: whether one is saved, save one, forget it (session + CSRF).
		['name' => 'app_password#status', 'url' => '/api/app-password', 'verb' => 'GET'],
		['name' => 'app_password#save', 'url' => '/api/app-password', 'verb' => 'PUT'],
		['name' => 'app_password#remove', 'url' => '/api/app-password', 'verb' => 'DELETE'],

		// MCP Apps re-serve.
		['name' => 'ui#store', 'url' => '/api/ui', 'verb' => 'POST'],
		['name' => 'ui#show', 'url' => '/ui/{id}', 'verb' => 'GET'],
	],
];
