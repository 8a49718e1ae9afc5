"""Apple's count-mean sketches: CMS and its Hadamard variant HCMS."""
