/** The account's credit balance (API reference 2.4, E1). */

/**
 * The credit balance of the account that owns the key: the response of `/v1/credits`, which has no
 * envelope, and what `client.credits()` resolves to.
 */
export interface CreditBalance {
  /** Remaining credits. */
  credits: number;
  /** `active` once a credit pack was bought on this account; `free` (not an error) before. */
  subscriptionStatus: 'free' | 'active';
  /**
   * The checkout session of the latest credit-pack purchase (`cs_…`), or `null` if none. Despite
   * the name it is not a subscription: packs are one-time purchases.
   */
  subscriptionId: string | null;
}
