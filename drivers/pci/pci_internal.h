/* Shared inside drivers/pci. */
#ifndef PCI_INTERNAL_H
#define PCI_INTERNAL_H

/* Map the ECAM region pci_set_ecam() gave, if any; pci_scan() calls it first. */
void pci_config_init(void);

#endif
