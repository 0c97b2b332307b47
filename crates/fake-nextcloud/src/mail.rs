//! Mail accounts and messages, as Nextcloud Mail holds them. The Tamebi app's
//! mail routes (`crate::app`) search, read and file sent mail and drafts
//! through this store.

use crate::fixture::Fixture;
use crate::world::User;
use std::collections::BTreeMap;

#[derive(Debug, Clone)]
pub struct Message {
    pub id: u64,
    pub account_id: u64,
    pub mailbox: String,
    pub from: String,
    pub to: Vec<String>,
    pub cc: Vec<String>,
    pub subject: String,
    pub date: i64,
    pub body: String,
    pub seen: bool,
}

#[derive(Debug, Clone)]
pub struct Account {
    pub id: u64,
    pub owner: String,
    pub email: String,
    pub name: String,
}

#[derive(Debug, Default)]
pub struct Mail {
    pub accounts: Vec<Account>,
    pub messages: Vec<Message>,
}

impl Mail {
    pub fn from_fixture(
        fixture: &Fixture,
        users: &BTreeMap<String, User>,
        problems: &mut Vec<String>,
    ) -> Mail {
        let mut mail = Mail::default();
        for account in &fixture.mail_accounts {
            let Some(user) = users.get(&account.owner) else {
                problems.push(format!("a mail account names unknown user {:?}", account.owner));
                continue;
            };
            let account_id = mail.accounts.len() as u64 + 1;
            mail.accounts.push(Account {
                id: account_id,
                owner: account.owner.clone(),
                email: account.email.clone(),
                name: account.name.clone().unwrap_or(user.display_name.clone()),
            });
            for message in &account.messages {
                let Some(date) = crate::clock::parse_rfc3339(&message.date) else {
                    problems.push(format!("mail date {:?} is not RFC 3339", message.date));
                    continue;
                };
                mail.messages.push(Message {
                    id: mail.messages.len() as u64 + 1,
                    account_id,
                    mailbox: message.mailbox.clone(),
                    from: message.from.clone(),
                    to: message.to.clone(),
                    cc: message.cc.clone(),
                    subject: message.subject.clone(),
                    date,
                    body: message.body.clone(),
                    seen: message.seen,
                });
            }
        }
        mail
    }

    /// Files a new message (sent mail, a draft) and returns its id.
    pub fn append(&mut self, mut message: Message) -> u64 {
        assert!(
            self.accounts.iter().any(|account| account.id == message.account_id),
            "a message belongs to an existing account"
        );
        message.id = self.messages.iter().map(|message| message.id).max().unwrap_or(0) + 1;
        let id = message.id;
        self.messages.push(message);
        id
    }

    /// The account a message belongs to.
    pub fn account(&self, id: u64) -> Option<&Account> {
        self.accounts.iter().find(|account| account.id == id)
    }

    /// The accounts a user owns.
    pub fn accounts_of<'a>(&'a self, uid: &'a str) -> impl Iterator<Item = &'a Account> + 'a {
        self.accounts.iter().filter(move |account| account.owner == uid)
    }
}
