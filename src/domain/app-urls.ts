/**
 * Paths of the web app's pages that other parts of the service link to (e-mails, events, error
 * messages). Pure: the routes under src/http/public/pages/ serve exactly these paths.
 */
export const INTEGRATIONS_PAGE_PATH = '/app/settings/integrations';

/** The page of one webhook subscription: state, re-verify, test, rotation, delivery log. */
export const subscriptionPagePath = (subscriptionId: string): string =>
  `${INTEGRATIONS_PAGE_PATH}/webhooks/${subscriptionId}`;

export const subscriptionPageUrl = (publicBaseUrl: string, subscriptionId: string): string =>
  `${publicBaseUrl}${subscriptionPagePath(subscriptionId)}`;
