/**
 * Imported first by the `lab` command: unless NODE_ENV says otherwise, the libraries run in production mode.
 * React's development build checks every element and attribute as it renders a page (about twice the time
 * of the page's JSON); `lab` serves labs, it is not a React development setup. Tests keep the development
 * build (they do not come through here).
 */
process.env.NODE_ENV ??= 'production';
