/** Where a project's hosted linking page lives. */

/** URL of the project's hosted linking page. */
export function linkUrl(baseUrl: string, slug: string): string {
  return `${baseUrl}/link/${slug}`;
}
