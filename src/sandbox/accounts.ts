/**
 * Keys, balances and billing state (API reference parts 3 and 5). Each key owns one account; accounts never
 * share a balance. A credit is reserved when a request passes the credit check and refunded if the
 * request then fails upstream, so concurrent requests can never overdraw an account.
 */
import { hash } from './data.ts';

/** An account of the sandbox: its key and its credits. */
export interface AccountSpec {
  apiKey: string;
  credits: number;
}

/** The `/v1/credits` record. */
export interface CreditBalance {
  credits: number;
  subscriptionStatus: 'free' | 'active';
  subscriptionId: string | null;
}

interface Account {
  credits: number;
  subscriptionStatus: 'free' | 'active';
  subscriptionId: string | null;
  purchases: number;
}

function checkCredits(credits: unknown, what: string): asserts credits is number {
  if (typeof credits !== 'number' || !Number.isSafeInteger(credits) || credits < 0) {
    throw new TypeError(`${what} must be a non-negative integer, got ${String(credits)}`);
  }
}

export class Accounts {
  private readonly byKey = new Map<string, Account>();

  constructor(specs: readonly AccountSpec[]) {
    if (!Array.isArray(specs) || specs.length === 0) {
      throw new TypeError('accounts must be a non-empty array of { apiKey, credits }');
    }
    specs.forEach((spec: AccountSpec, index) => {
      const apiKey: unknown = spec?.apiKey;
      if (typeof apiKey !== 'string' || !/^sk_live_[\x21-\x7e]+$/.test(apiKey)) {
        throw new TypeError(`accounts[${index}].apiKey must be a string starting with sk_live_`);
      }
      if (this.byKey.has(apiKey)) throw new TypeError(`accounts[${index}].apiKey is a duplicate`);
      checkCredits(spec.credits, `accounts[${index}].credits`);
      this.byKey.set(apiKey, { credits: spec.credits, subscriptionStatus: 'free', subscriptionId: null, purchases: 0 });
    });
  }

  has(apiKey: string): boolean {
    return this.byKey.has(apiKey);
  }

  /** The balance record of a key, as `/v1/credits` returns it. */
  balance(apiKey: string): CreditBalance {
    const account = this.get(apiKey);
    return {
      credits: account.credits,
      subscriptionStatus: account.subscriptionStatus,
      subscriptionId: account.subscriptionId,
    };
  }

  /** Takes one credit if the account has one; returns the balance seen before, for the 402 body. */
  reserve(apiKey: string): { ok: boolean; available: number } {
    const account = this.get(apiKey);
    if (account.credits < 1) return { ok: false, available: account.credits };
    account.credits -= 1;
    return { ok: true, available: account.credits + 1 };
  }

  /** Gives back a reserved credit when the request did not succeed. */
  refund(apiKey: string): void {
    this.get(apiKey).credits += 1;
  }

  /** A completed credit-pack purchase: credits this account only, marks it active with a `cs_` id. */
  purchase(apiKey: string, credits: number): CreditBalance {
    const account = this.get(apiKey);
    checkCredits(credits, 'credits');
    if (credits === 0) throw new TypeError('credits must be a positive integer, got 0');
    account.purchases += 1;
    account.credits += credits;
    account.subscriptionStatus = 'active';
    const session = hash(`${apiKey}\u0000${account.purchases}`).toString(36).padStart(7, '0');
    account.subscriptionId = `cs_live_${session}${account.purchases.toString(36)}`;
    return this.balance(apiKey);
  }

  private get(apiKey: string): Account {
    const account = this.byKey.get(apiKey);
    if (account === undefined) throw new TypeError('unknown API key: no sandbox account owns it');
    return account;
  }
}
