// The seeds' error codes in words, next to the control that caused them.

import { ConsoleError } from './api';

const MESSAGES: Record<string, string> = {
  invalid_pair_code: 'That pair code is wrong. Use the 6 digits the server printed at start.',
  invalid_key: 'That key is unknown, revoked or expired.',
  pair_code_unavailable: 'This server runs in development mode and has no pair code: sign in with any key.',
  invalid_credentials: 'The email or password is not right.',
  account_sign_in_unavailable: 'This server has no accounts: sign in with the pair code or a key.',
  rate_limited: 'Too many attempts. Wait a minute and try again.',
  not_mountable: 'This blueprint did not compile, so it cannot be shown.',
  signed_out: 'Your session ended. Sign in again.',
  csrf_token_invalid: 'The page lost its session token. Reload the console.',
  app_not_found: 'That app does not exist or is not yours.',
  app_deprovisioned: 'The app your key is locked to was deleted.',
  org_invite_access_denied: 'Only an owner or admin of that org can do this.',
  org_invite_not_found: 'That invite does not exist.',
  org_invite_already_accepted: 'That invite was already accepted; accepted invites are final.',
  org_invite_expired: 'That invite has expired.',
  org_invite_revoked: 'That invite was revoked.',
  connector_key_access_denied: 'That key belongs to another user.',
  connector_key_not_found: 'That key does not exist or is out of your reach.',
  coupon_not_found: 'No coupon has that code.',
  coupon_already_redeemed: 'That coupon was already redeemed.',
  coupon_expired: 'That coupon has expired.',
  coupon_access_denied: 'You are not a member of that org.',
  generator_not_found: 'No generator has that name.',
  missing_credentials: 'The generator needs a model provider key: set one first.',
  generation_failed: 'The generator produced nothing usable.',
  blueprint_not_found: 'That blueprint does not exist.',
  provider_key_not_found: 'No key is set for that provider.',
  insufficient_credit: 'Not enough credit.',
  http_404: 'The console is not enabled on this server.',
};

/** Readable text for a refusal: the mapped message, and the server's detail for argument errors. */
export function describe(error: unknown): string {
  if (error instanceof ConsoleError) {
    if (error.code === 'invalid_params') {
      return error.message.replace(/^Invalid params: /, '');
    }
    return MESSAGES[error.code] ?? error.message;
  }
  return 'The server could not be reached. Check your connection and try again.';
}
