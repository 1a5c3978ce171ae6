/** The page plugins are registered under the /app prefix: a page path without it, for app.get/app.post. */
export const route = (pagePath: string): string => pagePath.replace(/^\/app(?=\/)/, '');
