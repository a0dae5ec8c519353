"""The label view: pages, JSON API and Atom feeds over the stored digests."""
