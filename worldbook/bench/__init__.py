"""`worldbook bench`: benchmark runs against sample books, side by side with the peers' methods."""
