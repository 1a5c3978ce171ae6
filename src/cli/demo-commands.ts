import { DEMO_KEY_NAME, DEMO_KEY_SCOPES, DEMO_OWNER_EMAIL, newDemoPassword } from '../seed/demo-owner.ts';
import { CliError } from './admin-client.ts';
import { type Command, enc } from './command.ts';

interface UserList {
  users: { user_id: string; organization_id: string; email: string }[];
}

/**
 * `callcap demo …`: the demo organization that the first start on an empty embedded database
 * creates (src/seed/). Its password and key are printed once, by that start; these commands give
 * new ones through the operator API, so they work while the service runs (the embedded database is
 * open in the service's process only).
 */
export const DEMO_COMMANDS: Command[] = [
  {
    words: ['demo', 'reset-password'],
    args: [],
    flags: {
      'api-key': {
        hint: '',
        boolean: true,
        help: `also create a new API key (${DEMO_KEY_SCOPES.join(', ')}) and print it`,
      },
    },
    summary: `give the demo owner (${DEMO_OWNER_EMAIL}) a new console password and print it`,
    details: [
      'Signs the owner out everywhere (the old password and its sessions stop working). The new',
      'password (and key) are printed only now. Run it in the directory "npm start" runs in, or set',
      'DATA_DIR (or ADMIN_TOKEN) and ADMIN_PORT as the start printed. Start over instead: stop the',
      'service, delete ./data (DATA_DIR) and start again.',
    ],
    run: async (c) => {
      const found = (await c.call({
        method: 'GET',
        path: `/users?email=${enc(DEMO_OWNER_EMAIL)}`,
      })) as UserList;
      const owner = found.users[0];
      if (!owner) {
        throw new CliError(
          `this service has no demo organization (no user ${DEMO_OWNER_EMAIL}): the demo is created by the ` +
            'first start on an empty embedded database. Another user\'s password: "callcap user find --email <email>", ' +
            'then "callcap user set-password <user-id> --password -".',
        );
      }
      const password = newDemoPassword();
      await c.call({ method: 'PUT', path: `/users/${enc(owner.user_id)}/password`, json: { password } });
      const out: Record<string, string> = {
        organization_id: owner.organization_id,
        user_id: owner.user_id,
        email: owner.email,
        password,
      };
      if (c.flags['api-key'] === true) {
        const key = (await c.call({
          method: 'POST',
          path: `/organizations/${enc(owner.organization_id)}/api-keys`,
          json: { scopes: DEMO_KEY_SCOPES, name: DEMO_KEY_NAME },
        })) as { key: string };
        out.api_key = key.key;
      }
      return out;
    },
  },
];
