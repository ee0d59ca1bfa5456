import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Api } from './api';
import type { Me } from './api-types';

/*
 * The signed-in person. The token lives in sessionStorage: it survives a
 * reload of this tab and is gone when the tab closes. It is never logged and
 * never put in a URL.
 */

const TOKEN_KEY = 'durable-agent.console.token';

export const tokenStore = {
  read(): string | null {
    try {
      return window.sessionStorage.getItem(TOKEN_KEY);
    } catch {
      return null;
    }
  },
  write(token: string): void {
    window.sessionStorage.setItem(TOKEN_KEY, token);
  },
  clear(): void {
    window.sessionStorage.removeItem(TOKEN_KEY);
  },
};

export interface Signed {
  api: Api;
  me: Me;
  signOut(): void;
}

export const SignedContext = createContext<Signed | null>(null);

/** The signed-in person; pages are only rendered inside a signed-in shell. */
export function useSigned(): Signed {
  const signed = useContext(SignedContext);
  if (!signed) throw new Error('useSigned outside the signed-in shell');
  return signed;
}

/** Whether the person may decide calls and read the sessions of others in their tenant. */
export const canApprove = (me: Me): boolean => me.roles.includes('approver') || me.roles.includes('admin');
export const isAdmin = (me: Me): boolean => me.roles.includes('admin');

export const whoIs = (me: Me): string => `${me.tenant}/${me.user} (${me.roles.join(', ')})`;
