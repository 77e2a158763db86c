/** A `.sql` file imports as its text: the bundler, the test runner and the type check all read it so. */
declare module "*.sql" {
  const source: string
  export default source
}
