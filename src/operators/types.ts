/** Types shared by every operator. */

/** A source an operator accepts: arrays, generators and client streams alike. */
export type AnyIterable<T> = Iterable<T> | AsyncIterable<T>;

/** One step of a pipe: turns a stream of `A` into a stream of `B`. */
export type Operator<A, B> = (source: AnyIterable<A>) => AsyncIterable<B>;
